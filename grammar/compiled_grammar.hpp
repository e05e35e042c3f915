#pragma once
// A grammar ready to match: its rules lowered to a flat array of elements, where every maximal
// regular part of a rule body (literals, classes and repeats of them, with no rule reference
// inside) is one byte-level DFA. The pushdown part (rule references) is what the matcher's
// stacks track; the DFAs are the lexer. Immutable once built: one compiled grammar is shared by
// every request that uses it (grammar_cache).
//
// Compiling checks what parsing cannot: every referenced rule is defined, `root` exists, no rule
// is left-recursive (directly, or through rules that can match the empty string), no DFA
// grows past max_dfa_states (a regular expression that blows up), and no position can go on in
// more than compile_limits::max_branches ways at once. Each is a grammar_error; so is running
// out of the compile_budget (compile_limits.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compile_limits.hpp"
#include "grammar/gbnf.hpp"

namespace courier::grammar {

// A DFA over bytes. State 0 is the start; `next[s * 256 + b]` is the state after byte b, or
// dead. A state is accepting when the terminal may end there.
struct byte_dfa {
  static constexpr std::uint32_t dead = 0xFFFFFFFFu;
  std::vector<std::uint32_t> next;
  std::vector<std::uint8_t> accepting;
  std::vector<std::uint8_t> live;  // the state has at least one transition
  std::uint32_t num_states() const { return static_cast<std::uint32_t>(accepting.size()); }
};

// One element of a rule alternative. An alternative is a run of elements ended by `end`.
struct element {
  enum class kind : std::uint8_t { terminal, rule_ref, end };
  kind k = kind::end;
  std::uint32_t index = 0;  // terminal: into dfas; rule_ref: the rule; end: the rule it ends
};

constexpr std::uint32_t max_dfa_states = 4096;

class compiled_grammar {
 public:
  // Lowers `rules` (as parse_gbnf returns them) starting at `root`, within the limits or the
  // budget (shared with the stages before, e.g. parse_gbnf).
  static std::shared_ptr<const compiled_grammar> compile(const std::vector<gbnf_rule>& rules,
                                                         const std::string& root = "root",
                                                         const compile_limits& limits = {});
  static std::shared_ptr<const compiled_grammar> compile(const std::vector<gbnf_rule>& rules,
                                                         const std::string& root,
                                                         compile_budget& budget);

  const std::vector<element>& elements() const { return elements_; }
  const std::vector<byte_dfa>& dfas() const { return dfas_; }
  // Where each alternative of rule r starts, as indexes into elements().
  const std::vector<std::uint32_t>& alternatives(std::uint32_t rule) const {
    return rule_alts_[rule];
  }
  std::uint32_t root() const { return root_; }
  std::uint32_t num_rules() const { return static_cast<std::uint32_t>(rule_alts_.size()); }
  const std::string& rule_name(std::uint32_t rule) const { return rule_names_[rule]; }

 private:
  friend class grammar_builder;
  std::vector<element> elements_;
  std::vector<byte_dfa> dfas_;
  std::vector<std::vector<std::uint32_t>> rule_alts_;
  std::vector<std::string> rule_names_;
  std::uint32_t root_ = 0;
};

// parse_gbnf, then compile, on one budget.
std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text,
                                                     const compile_limits& limits = {});
std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text, compile_budget& budget);

}  // namespace courier::grammar
