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

// A DFA over bytes. State 0 is the start; step(s, b) is the state after byte b, or dead. A state
// accepts when the terminal may end there; it is live when some byte goes on from it.
//
// Plain: `next[s * 256 + b]` is the table. Counted (copies_max > 0): the terminal is X{min,max}
// for an X whose every string is no prefix of another (UTF-8 classes, literals, a JSON string
// character), so where one copy ends is never in doubt; the table is X's, and state
// k * table_states() + q is X's state q after k finished copies. `[a-z ]{0,4000}` is then two
// table states, not 4,000 (a DFA that size, or a rule per copy). copies_max == unbounded: X{min,}
// (k stops counting at min).
struct byte_dfa {
  static constexpr std::uint32_t dead = 0xFFFFFFFFu;
  static constexpr std::uint32_t unbounded = 0xFFFFFFFFu;
  std::vector<std::uint32_t> next;
  std::vector<std::uint8_t> accepting;
  std::vector<std::uint8_t> live;  // the state has at least one transition
  std::uint32_t copies_min = 0;
  std::uint32_t copies_max = 0;  // 0: plain

  bool counted() const { return copies_max != 0; }
  std::uint32_t table_states() const { return static_cast<std::uint32_t>(accepting.size()); }
  // Every state (counted: the table's times the counts).
  std::uint64_t num_states() const {
    if (!counted()) return table_states();
    const std::uint64_t counts = copies_max == unbounded ? copies_min + 1ull : copies_max + 1ull;
    return counts * table_states();
  }
  std::uint32_t step(std::uint32_t s, std::uint8_t b) const {
    if (!counted()) return next[std::size_t{s} * 256 + b];
    const std::uint32_t n = table_states();
    const std::uint32_t k = s / n, q = s % n;
    if (q == 0 && copies_max != unbounded && k >= copies_max) return dead;
    const std::uint32_t t = next[std::size_t{q} * 256 + b];
    if (t == dead) return dead;
    if (!accepting[t]) return k * n + t;
    return copies_max == unbounded && k >= copies_min ? k * n : (k + 1) * n;  // a copy ends
  }
  bool accepts(std::uint32_t s) const {
    if (!counted()) return accepting[s] != 0;
    return s % table_states() == 0 && s / table_states() >= copies_min;
  }
  bool is_live(std::uint32_t s) const {
    if (!counted()) return live[s] != 0;
    return s % table_states() != 0 || copies_max == unbounded || s / table_states() < copies_max;
  }
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
  // The parse stacks a matcher state may hold (compile_limits::max_branches it was compiled
  // with): compiling bounds those one position starts; an ambiguous part (`("a" | "aa"){1,5000}`:
  // after n bytes, n/2 ways to have split them) grows them with the output, and a decoding
  // step costs a mask walk per stack, so a state past this is not followed (grammar_rows).
  std::uint64_t max_stacks() const { return max_stacks_; }

 private:
  friend class grammar_builder;
  std::vector<element> elements_;
  std::vector<byte_dfa> dfas_;
  std::vector<std::vector<std::uint32_t>> rule_alts_;
  std::vector<std::string> rule_names_;
  std::uint32_t root_ = 0;
  std::uint64_t max_stacks_ = compile_limits{}.max_branches;
};

// parse_gbnf, then compile, on one budget.
std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text,
                                                     const compile_limits& limits = {});
std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text, compile_budget& budget);

}  // namespace courier::grammar
