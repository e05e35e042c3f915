#include "grammar/compiled_grammar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "grammar/grammar_error.hpp"
#include "grammar/regular_dfa.hpp"

namespace courier::grammar {

// Lowers rule bodies to alternatives of items, adding helper rules for the parts that are not
// regular (a group with a rule reference inside an alternation or a repeat).
class grammar_builder {
  // An item of a lowered alternative: a regular expr (one DFA) or a rule reference.
  struct item {
    bool is_ref = false;
    std::uint32_t rule = 0;
    expr regular;
  };
  using alternative = std::vector<item>;

 public:
  std::shared_ptr<const compiled_grammar> build(const std::vector<gbnf_rule>& rules,
                                                const std::string& root) {
    for (const gbnf_rule& r : rules) {
      if (ids_.count(r.name) == 0) {
        ids_.emplace(r.name, static_cast<std::uint32_t>(names_.size()));
        names_.push_back(r.name);
      }
    }
    const auto root_it = ids_.find(root);
    if (root_it == ids_.end()) throw grammar_error(fmt::format("grammar: no rule '{}'", root));
    for (const gbnf_rule& r : rules) check_refs(r.name, r.body);
    find_regular_rules(rules);
    lowered_.resize(names_.size());
    for (const gbnf_rule& r : rules) {
      const std::uint32_t id = ids_.at(r.name);
      for (alternative& a : lower_alternatives(r.body)) lowered_[id].push_back(std::move(a));
    }
    auto g = std::make_shared<compiled_grammar>();
    emit(*g);
    g->root_ = root_it->second;
    check_finite(*g);
    check_left_recursion(*g);
    return g;
  }

 private:
  void check_refs(const std::string& rule, const expr& body) {
    std::vector<const expr*> todo{&body};
    while (!todo.empty()) {
      const expr* x = todo.back();
      todo.pop_back();
      if (x->k == expr::kind::rule_ref && ids_.count(x->text) == 0) {
        throw grammar_error(
            fmt::format("grammar: rule '{}' refers to undefined rule '{}'", rule, x->text));
      }
      for (const expr& c : x->children) todo.push_back(&c);
    }
  }

  std::uint32_t new_rule(const std::string& base) {
    const auto id = static_cast<std::uint32_t>(names_.size());
    names_.push_back(fmt::format("{}~{}", base, id));
    lowered_.emplace_back();
    return id;
  }

  // Rules whose language is regular (no reference, or only to such rules, never to themselves),
  // with their bodies so inlined. A reference to one is lowered as its body when the whole stays
  // small: `char{1,40}` or `ws` then become part of one DFA instead of a rule each time. A rule
  // ends inside most tokens, so its every character would make the token masks check most of
  // the vocabulary against the real stacks (54k uncertain tokens a step, in a maxLength string).
  static constexpr std::uint64_t max_inline_nfa = 3000;  // estimated NFA states of one part
  static constexpr int max_inline_depth = 2 * max_nesting;

  void find_regular_rules(const std::vector<gbnf_rule>& rules) {
    std::vector<expr> bodies(names_.size());
    std::vector<std::vector<expr>> alts(names_.size());
    for (const gbnf_rule& r : rules) alts[ids_.at(r.name)].push_back(r.body);
    for (std::size_t i = 0; i < alts.size(); ++i) bodies[i] = expr::make_alternation(std::move(alts[i]));
    regular_.assign(names_.size(), std::nullopt);
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t r = 0; r < bodies.size(); ++r) {
        if (regular_[r]) continue;
        if (std::optional<expr> x = inlined(bodies[r])) {
          regular_[r] = std::move(*x);
          changed = true;
        }
      }
    }
  }

  // `e` with every reference replaced by its regular rule's body; nullopt when a reference is
  // to a rule not (yet) known regular, or the result would be deeper or larger than the limits.
  std::optional<expr> inlined(const expr& e) const {
    int depth = 0;
    std::uint64_t size = 0;
    std::optional<expr> out = inline_into(e, 0, depth, size);
    if (!out || depth > max_inline_depth || size > max_inline_nfa) return std::nullopt;
    return out;
  }

  // The copy, with its depth and an estimate of its NFA states (what a DFA grows with).
  std::optional<expr> inline_into(const expr& e, int level, int& depth,
                                  std::uint64_t& size) const {
    depth = std::max(depth, level);
    if (level > max_inline_depth) return std::nullopt;
    if (e.k == expr::kind::rule_ref) {
      const auto& body = regular_[ids_.at(e.text)];
      if (!body) return std::nullopt;
      return inline_into(*body, level + 1, depth, size);
    }
    expr out = e;
    out.children.clear();
    std::uint64_t children_size = 0;
    for (const expr& c : e.children) {
      std::optional<expr> x = inline_into(c, level + 1, depth, children_size);
      if (!x) return std::nullopt;
      out.children.push_back(std::move(*x));
    }
    std::uint64_t own = 0;
    switch (e.k) {
      case expr::kind::literal: own = e.text.size(); break;
      case expr::kind::char_class: own = 4 * e.ranges.size() + 1; break;
      case expr::kind::repeat: {
        const std::uint64_t copies = e.max == expr::unbounded ? e.min + 1u : e.max;
        children_size *= std::max<std::uint64_t>(copies, 1);
        own = copies + 1;
        break;
      }
      default: own = e.children.size() + 1; break;
    }
    size += std::min<std::uint64_t>(children_size + own, max_inline_nfa + 1);
    if (size > max_inline_nfa) return std::nullopt;
    return out;
  }

  // The alternatives of `e`: one regular item when it inlines, else those of its structure.
  std::vector<alternative> lower_alternatives(const expr& e) {
    alternative whole;
    if (lower_regular(e, whole)) return {std::move(whole)};
    return lower_structure_alternatives(e);
  }

  // `e` does not inline: one alternative per child of an alternation, else its parts.
  std::vector<alternative> lower_structure_alternatives(const expr& e) {
    std::vector<alternative> out;
    if (e.k == expr::kind::alternation) {
      for (const expr& c : e.children) out.push_back(lower_sequence(c));
    } else {
      out.emplace_back();
      lower_structure(e, out.back());
    }
    return out;
  }

  // Appends `e` as one regular item when it inlines; false (nothing appended) when it does not.
  bool lower_regular(const expr& e, alternative& out) {
    std::optional<expr> x = inlined(e);
    if (!x) return false;
    if (x->k != expr::kind::empty) append(out, item{false, 0, std::move(*x)});
    return true;
  }

  // Appends `it`, merging it into a preceding regular item.
  static void append(alternative& a, item it) {
    if (!it.is_ref && !a.empty() && !a.back().is_ref) {
      a.back().regular = expr::make_sequence({std::move(a.back().regular), std::move(it.regular)});
      return;
    }
    a.push_back(std::move(it));
  }

  static item ref(std::uint32_t rule) { return item{true, rule, {}}; }

  alternative lower_sequence(const expr& e) {
    alternative out;
    lower_into(e, out);
    return out;
  }

  // A rule with these alternatives (lowered before the rule is indexed: lowering adds rules).
  std::uint32_t helper_rule(std::vector<alternative> alts) {
    const std::uint32_t id = new_rule("group");
    lowered_[id] = std::move(alts);
    return id;
  }

  void lower_into(const expr& e, alternative& out) {
    if (!lower_regular(e, out)) lower_structure(e, out);
  }

  // The parts of `e`, which does not inline: references, helper rules, regular pieces.
  void lower_structure(const expr& e, alternative& out) {
    switch (e.k) {
      case expr::kind::rule_ref:
        out.push_back(ref(ids_.at(e.text)));
        return;
      case expr::kind::sequence:
        for (const expr& c : e.children) lower_into(c, out);
        return;
      case expr::kind::alternation:
        out.push_back(ref(helper_rule(lower_structure_alternatives(e))));
        return;
      case expr::kind::repeat:
        lower_repeat(e, out);
        return;
      default:
        break;
    }
    throw grammar_error("grammar: internal error lowering an expression");
  }

  // x{min,max} with x not regular: x's rule `min` times, then a tail rule: `T ::= X T | ""`
  // when unbounded, else a chain `T1 ::= X T2 | ""`, ..., `Tk ::= X | ""`.
  void lower_repeat(const expr& e, alternative& out) {
    const std::uint32_t x = helper_rule(lower_alternatives(e.children[0]));
    for (std::uint32_t i = 0; i < e.min; ++i) out.push_back(ref(x));
    if (e.max == expr::unbounded) {
      const std::uint32_t tail = new_rule("star");
      lowered_[tail] = {alternative{ref(x), ref(tail)}, alternative{}};
      out.push_back(ref(tail));
      return;
    }
    if (e.max == e.min) return;
    std::uint32_t next = 0;
    bool has_next = false;
    for (std::uint32_t i = e.max; i > e.min; --i) {
      const std::uint32_t t = new_rule("opt");
      alternative take{ref(x)};
      if (has_next) take.push_back(ref(next));
      lowered_[t] = {std::move(take), alternative{}};
      next = t;
      has_next = true;
    }
    out.push_back(ref(next));
  }

  void emit(compiled_grammar& g) {
    g.rule_names_ = names_;
    g.rule_alts_.resize(names_.size());
    // Minimized DFAs are numbered canonically: equal languages give equal tables, one DFA.
    std::map<std::pair<std::vector<std::uint32_t>, std::vector<std::uint8_t>>, std::uint32_t>
        dfa_ids;
    for (std::uint32_t r = 0; r < lowered_.size(); ++r) {
      for (const alternative& a : lowered_[r]) {
        g.rule_alts_[r].push_back(static_cast<std::uint32_t>(g.elements_.size()));
        for (const item& it : a) {
          if (it.is_ref) {
            g.elements_.push_back({element::kind::rule_ref, it.rule});
            continue;
          }
          byte_dfa d = build_dfa(it.regular);
          auto [found, added] = dfa_ids.emplace(std::make_pair(d.next, d.accepting),
                                                static_cast<std::uint32_t>(g.dfas_.size()));
          if (added) g.dfas_.push_back(std::move(d));
          g.elements_.push_back({element::kind::terminal, found->second});
        }
        g.elements_.push_back({element::kind::end, r});
      }
    }
  }

  // Every rule the root can reach must be able to finish: its terminals match something, and
  // some alternative of it avoids rules that cannot finish (`a ::= "x" a` alone never does). A
  // mask would otherwise lead decoding into a state it can never leave.
  void check_finite(const compiled_grammar& g) {
    const std::uint32_t n = g.num_rules();
    for (std::uint32_t r = 0; r < n; ++r) {
      for (std::uint32_t start : g.alternatives(r)) {
        for (std::uint32_t e = start; g.elements()[e].k != element::kind::end; ++e) {
          const element& el = g.elements()[e];
          if (el.k != element::kind::terminal) continue;
          const byte_dfa& d = g.dfas()[el.index];
          if (!d.live[0] && !d.accepting[0]) {
            throw grammar_error(
                fmt::format("grammar: a part of rule '{}' matches nothing", display(r)));
          }
        }
      }
    }
    std::vector<char> finishes(n, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (std::uint32_t r = 0; r < n; ++r) {
        if (finishes[r]) continue;
        for (std::uint32_t start : g.alternatives(r)) {
          std::uint32_t e = start;
          while (g.elements()[e].k == element::kind::terminal ||
                 (g.elements()[e].k == element::kind::rule_ref &&
                  finishes[g.elements()[e].index])) {
            ++e;
          }
          if (g.elements()[e].k == element::kind::end) {
            finishes[r] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    std::vector<char> reached(n, 0);
    std::vector<std::uint32_t> todo{g.root()};
    reached[g.root()] = 1;
    std::string stuck;  // the rules that cannot finish, in the order reached
    while (!todo.empty()) {
      const std::uint32_t r = todo.back();
      todo.pop_back();
      if (!finishes[r]) stuck += fmt::format("{}'{}'", stuck.empty() ? "" : ", ", display(r));
      for (std::uint32_t start : g.alternatives(r)) {
        for (std::uint32_t e = start; g.elements()[e].k != element::kind::end; ++e) {
          const element& el = g.elements()[e];
          if (el.k == element::kind::rule_ref && !reached[el.index]) {
            reached[el.index] = 1;
            todo.push_back(el.index);
          }
        }
      }
    }
    if (!stuck.empty()) {
      throw grammar_error(fmt::format(
          "grammar: rules that can never finish (each alternative needs one of them again): {}",
          stuck));
    }
  }

  // A rule is left-recursive when it can reach itself without consuming a byte: through the
  // first element of an alternative, or a later one after elements that can all be empty.
  void check_left_recursion(const compiled_grammar& g) {
    const std::uint32_t n = g.num_rules();
    std::vector<char> nullable(n, 0);
    auto element_nullable = [&](const element& el) {
      if (el.k == element::kind::terminal) return g.dfas()[el.index].accepting[0] != 0;
      return el.k == element::kind::rule_ref && nullable[el.index] != 0;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (std::uint32_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (std::uint32_t start : g.alternatives(r)) {
          std::uint32_t e = start;
          while (g.elements()[e].k != element::kind::end && element_nullable(g.elements()[e])) ++e;
          if (g.elements()[e].k == element::kind::end) {
            nullable[r] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    std::vector<std::vector<std::uint32_t>> first(n);  // rules reachable at the left edge
    for (std::uint32_t r = 0; r < n; ++r) {
      for (std::uint32_t start : g.alternatives(r)) {
        for (std::uint32_t e = start; g.elements()[e].k != element::kind::end; ++e) {
          const element& el = g.elements()[e];
          if (el.k == element::kind::rule_ref) first[r].push_back(el.index);
          if (!element_nullable(el)) break;
        }
      }
    }
    // Iterative depth-first search for a cycle (0 new, 1 on the path, 2 done).
    std::vector<char> color(n, 0);
    for (std::uint32_t s = 0; s < n; ++s) {
      if (color[s]) continue;
      std::vector<std::pair<std::uint32_t, std::size_t>> path{{s, 0}};
      color[s] = 1;
      while (!path.empty()) {
        auto& [r, next] = path.back();
        if (next == first[r].size()) {
          color[r] = 2;
          path.pop_back();
          continue;
        }
        const std::uint32_t t = first[r][next++];
        if (color[t] == 1) {
          throw grammar_error(fmt::format("grammar: rule '{}' is left-recursive", display(t)));
        }
        if (color[t] == 0) {
          color[t] = 1;
          path.push_back({t, 0});
        }
      }
    }
  }

  // A helper rule is named after its base ("group~12"); users see the rule they wrote.
  std::string display(std::uint32_t r) const { return names_[r]; }

  std::map<std::string, std::uint32_t> ids_;
  std::vector<std::optional<expr>> regular_;  // per rule: its inlined body, when regular
  std::vector<std::string> names_;
  std::vector<std::vector<alternative>> lowered_;
};

std::shared_ptr<const compiled_grammar> compiled_grammar::compile(
    const std::vector<gbnf_rule>& rules, const std::string& root) {
  return grammar_builder().build(rules, root);
}

std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text) {
  return compiled_grammar::compile(parse_gbnf(text));
}

}  // namespace courier::grammar
