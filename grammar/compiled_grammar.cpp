#include "grammar/compiled_grammar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
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
    std::uint64_t size = 0;         // regular: its estimated NFA states
    std::shared_ptr<byte_dfa> dfa;  // regular: its DFA, when built already (a trial)
  };
  using alternative = std::vector<item>;

 public:
  explicit grammar_builder(compile_budget& budget) : budget_(budget) {}

  std::shared_ptr<const compiled_grammar> build(const std::vector<gbnf_rule>& rules,
                                                const std::string& root) {
    for (const gbnf_rule& r : rules) {
      if (ids_.count(r.name) == 0) {
        ids_.emplace(r.name, static_cast<std::uint32_t>(names_.size()));
        names_.push_back(r.name);
        budget_.charge_memory(r.name.size() + 96);
      }
    }
    const auto root_it = ids_.find(root);
    if (root_it == ids_.end()) throw grammar_error(fmt::format("grammar: no rule '{}'", root));
    std::vector<expr> bodies;  // simplified: literal alternations as tries, nested repeats merged
    for (const gbnf_rule& r : rules) {
      check_refs(r.name, r.body);
      bodies.push_back(simplified(r.body, 0));
    }
    count_refs(bodies);
    find_regular_rules(rules, bodies);
    lowered_.resize(names_.size());
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const std::uint32_t id = ids_.at(rules[i].name);
      for (alternative& a : lower_alternatives(bodies[i])) lowered_[id].push_back(std::move(a));
    }
    auto g = std::make_shared<compiled_grammar>();
    emit(*g);
    g->root_ = root_it->second;
    g->max_stacks_ = budget_.limits().max_branches;
    check_finite(*g);
    const std::vector<char> nullable = nullable_rules(*g);
    check_left_recursion(*g, nullable);
    check_branches(*g, nullable);
    return g;
  }

 private:
  // Also charges the body's nodes: what parsing it held.
  void check_refs(const std::string& rule, const expr& body) {
    std::vector<const expr*> todo{&body};
    while (!todo.empty()) {
      const expr* x = todo.back();
      todo.pop_back();
      budget_.charge_work(1);
      budget_.charge_memory(node_bytes(*x));
      if (x->k == expr::kind::rule_ref && ids_.count(x->text) == 0) {
        throw grammar_error(
            fmt::format("grammar: rule '{}' refers to undefined rule '{}'", rule, x->text));
      }
      for (const expr& c : x->children) todo.push_back(&c);
    }
  }

  // `e` without its children (copying them only to clear them would copy the whole subtree).
  [[gnu::noinline]] static expr shallow_copy(const expr& e) {
    expr out;
    out.k = e.k;
    out.text = e.text;
    out.ranges = e.ranges;
    out.min = e.min;
    out.max = e.max;
    return out;
  }

  static std::uint64_t node_bytes(const expr& e) {
    return sizeof(expr) + e.text.size() + e.ranges.size() * sizeof(code_point_range);
  }

  // --- simplification (before inlining): smaller automata, fewer parse stacks ---

  // A trie's levels of branching past which the rest of an alternation of literals stays flat
  // (bounds the recursion; a trie is rarely deeper).
  static constexpr int max_trie_levels = 32;
  // Alternations with at least this many literals are factored into a trie.
  static constexpr std::size_t min_trie_literals = 16;

  // `e` with every alternation of many literals made a trie (`"ab" | "ac"` as `"a" ("b" | "c")`:
  // a linear NFA, at most 256 alternatives a level) and a repeat of a star or plus merged with
  // it ((x*){m,n} is x*, (x+){m,n} is x{m,}): both otherwise blow up automata or parse stacks.
  expr simplified(const expr& e, int depth) {
    if (depth > 4 * max_nesting) throw grammar_error("grammar: expression nested too deep");
    budget_.charge_work(1);
    expr out = shallow_copy(e);
    std::vector<std::string_view> literals;
    if (e.k == expr::kind::alternation) {
      for (const expr& c : e.children) {
        if (c.k == expr::kind::literal) literals.push_back(c.text);
      }
    }
    const bool as_trie = literals.size() >= min_trie_literals;
    for (const expr& c : e.children) {
      if (!as_trie || c.k != expr::kind::literal) out.children.push_back(simplified(c, depth + 1));
    }
    if (as_trie) {
      std::sort(literals.begin(), literals.end());
      literals.erase(std::unique(literals.begin(), literals.end()), literals.end());
      out.children.push_back(trie(literals, 0, 0));
    }
    if (out.k == expr::kind::repeat) return merged_repeat(std::move(out));
    return out;
  }

  // The words (sorted, distinct, sharing their first `skip` bytes) less those bytes, as a trie.
  expr trie(const std::vector<std::string_view>& words, std::size_t skip, int level) {
    budget_.charge_work(words.size());
    std::vector<expr> alts;
    std::size_t i = 0;
    if (words[0].size() == skip) {  // sorted: the word that ends here comes first
      alts.push_back(expr::make_empty());
      ++i;
    }
    while (i < words.size()) {
      std::size_t j = i + 1;
      while (j < words.size() && words[j][skip] == words[i][skip]) ++j;
      // The group [i, j) shares its first byte; the sorted ends bound its common prefix.
      const std::string_view first = words[i];
      const std::string_view last = words[j - 1];
      std::size_t common = skip + 1;
      while (common < first.size() && common < last.size() && first[common] == last[common]) {
        ++common;
      }
      budget_.charge_memory(sizeof(expr) + common - skip);
      expr head = expr::make_literal(std::string(first.substr(skip, common - skip)));
      if (j - i == 1 || level >= max_trie_levels) {
        std::vector<expr> rest;
        for (std::size_t k = i; k < j; ++k) {
          budget_.charge_memory(sizeof(expr) + words[k].size() - common);
          rest.push_back(expr::make_literal(std::string(words[k].substr(common))));
        }
        alts.push_back(
            expr::make_sequence({std::move(head), expr::make_alternation(std::move(rest))}));
      } else {
        const std::vector<std::string_view> group(words.begin() + static_cast<std::ptrdiff_t>(i),
                                                  words.begin() + static_cast<std::ptrdiff_t>(j));
        alts.push_back(expr::make_sequence({std::move(head), trie(group, common, level + 1)}));
      }
      i = j;
    }
    return expr::make_alternation(std::move(alts));
  }

  // A repeat whose child is a star or plus: (x*){m,n} is x* when n > 0, (x+){m,n} is x{m,} .
  static expr merged_repeat(expr e) {
    if (e.max == 0) return expr::make_empty();
    if (e.min == 1 && e.max == 1) return std::move(e.children[0]);
    expr& c = e.children[0];
    if (c.k != expr::kind::repeat || c.max != expr::unbounded || c.min > 1) return e;
    if (c.min == 0) return std::move(c);
    return expr::make_repeat(std::move(c.children[0]), e.min, expr::unbounded);
  }

  void count_refs(const std::vector<expr>& bodies) {
    num_refs_.assign(names_.size(), 0);
    std::vector<const expr*> todo;
    for (const expr& b : bodies) todo.push_back(&b);
    while (!todo.empty()) {
      const expr* x = todo.back();
      todo.pop_back();
      if (x->k == expr::kind::rule_ref) ++num_refs_[ids_.at(x->text)];
      for (const expr& c : x->children) todo.push_back(&c);
    }
  }

  std::uint32_t new_rule(const std::string& base) {
    const auto id = static_cast<std::uint32_t>(names_.size());
    budget_.charge_memory(base.size() + 96);
    names_.push_back(fmt::format("{}~{}", base, id));
    lowered_.emplace_back();
    return id;
  }

  // Rules whose language is regular (no reference, or only to such rules, never to themselves),
  // with their bodies so inlined. A reference to one is lowered as its body when the whole stays
  // small: `char{1,40}` or `ws` then become part of one DFA instead of a rule each time. A rule
  // ends inside most tokens, so its every character would make the token masks check most of
  // the vocabulary against the real stacks (54k uncertain tokens a step, in a maxLength string).
  // A rule referenced more than once is copied only while small: copying a large one into each
  // reference (a chain of rules each holding the next, as a schema's optional members make)
  // would build DFAs quadratic in the grammar.
  static constexpr std::uint64_t max_inline_nfa = 3000;  // estimated NFA states of one part
  static constexpr std::uint64_t max_shared_inline_nfa = 300;
  static constexpr int max_inline_depth = 2 * max_nesting;

  struct inline_result {
    expr e;
    std::uint64_t size = 0;   // estimated NFA states
    std::uint64_t bytes = 0;  // the copy's nodes
  };

  void find_regular_rules(const std::vector<gbnf_rule>& rules, const std::vector<expr>& bodies) {
    std::vector<std::vector<expr>> alts(names_.size());
    for (std::size_t i = 0; i < rules.size(); ++i) {
      alts[ids_.at(rules[i].name)].push_back(bodies[i]);
    }
    std::vector<expr> joined(names_.size());
    for (std::size_t i = 0; i < alts.size(); ++i) {
      joined[i] = expr::make_alternation(std::move(alts[i]));
    }
    regular_.assign(names_.size(), std::nullopt);
    regular_size_.assign(names_.size(), 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t r = 0; r < joined.size(); ++r) {
        if (regular_[r]) continue;
        if (std::optional<inline_result> x = inlined(joined[r])) {
          budget_.charge_memory(x->bytes);
          regular_[r] = std::move(x->e);
          regular_size_[r] = x->size;
          changed = true;
        }
      }
    }
  }

  // `e` with every reference replaced by its regular rule's body; nullopt when a reference is
  // to a rule not (yet) known regular or too large to copy, or the result would be deeper or
  // larger than the limits.
  std::optional<inline_result> inlined(const expr& e, std::uint64_t cap = max_inline_nfa) {
    int depth = 0;
    std::uint64_t size = 0;
    const std::uint64_t work_before = budget_.work();
    inline_cap_ = cap;
    std::optional<expr> out = inline_into(e, 0, depth, size);
    inline_cap_ = max_inline_nfa;
    if (!out || depth > max_inline_depth || size > cap) return std::nullopt;
    // A node of the copy is one step of work: what it holds, at most (classes and literals
    // counted as nodes; their ranges and bytes are small beside them).
    return inline_result{std::move(*out), size, (budget_.work() - work_before) * sizeof(expr)};
  }

  // inline_into's work on a copied node once its children are in (a repeat of a star or plus
  // merged); returns its own size and scales children_size. Out of line, so that the recursion's
  // frames stay small (the fuzz targets run on 512 KiB under ASan: tests/fuzz/README.md).
  [[gnu::noinline]] static std::uint64_t finish_inline(const expr& e, expr& out,
                                                      std::uint64_t& children_size) {
    std::uint64_t own = 0;
    switch (e.k) {
      case expr::kind::literal: own = e.text.size(); break;
      case expr::kind::char_class: own = 4 * e.ranges.size() + 1; break;
      case expr::kind::repeat: {
        // A reference to a star or plus rule, now inlined, merges with the repeat around it.
        const expr& c = out.children[0];
        const bool star_or_plus =
            c.k == expr::kind::repeat && c.max == expr::unbounded && c.min <= 1;
        const bool star = star_or_plus && c.min == 0;
        out = merged_repeat(std::move(out));
        std::uint64_t copies = out.max == expr::unbounded ? out.min + 1u : out.max;
        if (star) copies = 1;
        children_size *= std::max<std::uint64_t>(copies, 1);
        own = copies + 1;
        break;
      }
      default: own = e.children.size() + 1; break;
    }
    return own;
  }

  // The copy, with its depth and an estimate of its NFA states (what a DFA grows with).
  std::optional<expr> inline_into(const expr& e, int level, int& depth, std::uint64_t& size) {
    depth = std::max(depth, level);
    if (level > max_inline_depth) return std::nullopt;
    budget_.charge_work(1);
    if (e.k == expr::kind::rule_ref) {
      const std::uint32_t r = ids_.at(e.text);
      if (!regular_[r]) return std::nullopt;
      if (num_refs_[r] > 1 && regular_size_[r] > max_shared_inline_nfa) return std::nullopt;
      return inline_into(*regular_[r], level + 1, depth, size);
    }
    expr out = shallow_copy(e);
    std::uint64_t children_size = 0;
    for (const expr& c : e.children) {
      std::optional<expr> x = inline_into(c, level + 1, depth, children_size);
      if (!x) return std::nullopt;
      out.children.push_back(std::move(*x));
    }
    const std::uint64_t own = finish_inline(e, out, children_size);
    size += std::min<std::uint64_t>(children_size + own, inline_cap_ + 1);
    if (size > inline_cap_) return std::nullopt;
    return out;
  }

  // The alternatives of `e`: one regular item when it inlines, else those of its structure.
  std::vector<alternative> lower_alternatives(const expr& e) {
    alternative whole;
    if (lower_regular(e, whole)) return {std::move(whole)};
    if (std::optional<alternative> built = trial_dfa(e)) return {std::move(*built)};
    return lower_structure_alternatives(e);
  }

  // The estimate (NFA states) is far above the DFA for some regular parts: alternations of
  // strings that share prefixes, as a schema's extra-key exclusion writes them. Lowered as
  // rules, each alternative would be a parse stack at once; so a regular part up to
  // max_trial_nfa is built as one DFA, and lowered as rules only when that DFA is too large.
  static constexpr std::uint64_t max_trial_nfa = 64 * max_inline_nfa;

  // A trial runs on a budget of its own, this small, and gives up (rules instead) past it.
  static constexpr std::uint64_t max_trial_work = std::uint64_t{1} << 24;
  static constexpr std::uint64_t max_trial_memory = 16u << 20;

  std::optional<alternative> trial_dfa(const expr& e) {
    std::optional<inline_result> x = inlined(e, max_trial_nfa);
    if (!x) return std::nullopt;
    compile_limits limits = budget_.limits();
    limits.max_work = std::min(limits.max_work, max_trial_work);
    limits.max_memory_bytes = std::min(limits.max_memory_bytes, max_trial_memory);
    compile_budget trial(limits);
    std::shared_ptr<byte_dfa> d;
    try {
      d = std::make_shared<byte_dfa>(build_dfa(x->e, trial));
    } catch (const grammar_error&) {  // too large a DFA, or the trial's budget: rules then
      budget_.charge_work(trial.work());
      return std::nullopt;
    }
    budget_.charge_work(trial.work());
    budget_.charge_memory(x->bytes + table_bytes(*d));
    return alternative{item{false, 0, std::move(x->e), max_inline_nfa + 1, std::move(d)}};
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
    std::optional<inline_result> x = inlined(e);
    if (!x) return false;
    budget_.charge_memory(x->bytes);
    if (x->e.k != expr::kind::empty) append(out, item{false, 0, std::move(x->e), x->size, nullptr});
    return true;
  }

  // Appends `it`, merging it into a preceding regular item while the two stay one small part
  // (a sequence of many small parts, as an object of many required members, becomes several
  // DFAs one after another, not one too large to build).
  static void append(alternative& a, item it) {
    if (!it.is_ref && !a.empty() && !a.back().is_ref && !a.back().dfa && !it.dfa &&
        a.back().size + it.size <= max_inline_nfa) {
      expr& back = a.back().regular;
      if (back.k != expr::kind::sequence) {
        expr seq;
        seq.k = expr::kind::sequence;
        seq.children.push_back(std::move(back));
        back = std::move(seq);
      }
      if (it.regular.k == expr::kind::sequence) {
        for (expr& c : it.regular.children) back.children.push_back(std::move(c));
      } else {
        back.children.push_back(std::move(it.regular));
      }
      a.back().size += it.size;
      return;
    }
    a.push_back(std::move(it));
  }

  static item ref(std::uint32_t rule) { return item{true, rule, {}, 0, nullptr}; }

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
        if (!lower_counted(e, out)) lower_repeat(e, out);
        return;
      default:
        break;
    }
    throw grammar_error("grammar: internal error lowering an expression");
  }

  // x{min,max} of a regular x none of whose strings is a prefix of another, too large to inline:
  // one counted terminal (byte_dfa::counted), neither a DFA state nor a rule per copy, so that
  // its positions far from its bounds are one mask position (`[a-z ]{0,4000}`, a maxLength).
  bool lower_counted(const expr& e, alternative& out) {
    std::optional<inline_result> x = inlined(e.children[0]);
    if (!x) return false;
    std::optional<byte_dfa> d;
    try {
      d = build_counted_dfa(x->e, e.min, e.max, budget_);
    } catch (const grammar_error& err) {
      if (!err.limit.empty()) throw;  // the budget: the request's, not this lowering's
      return false;                   // x's own DFA too large: rules then
    }
    if (!d) return false;
    budget_.charge_memory(x->bytes);
    append(out, item{false, 0, std::move(x->e), max_inline_nfa + 1,
                     std::make_shared<byte_dfa>(std::move(*d))});
    return true;
  }

  // x{min,max} with x not regular, or not counted: x's rule `min` times, then a tail rule: `T ::= X T | ""`
  // when unbounded, else a chain `T1 ::= X T2 | ""`, ..., `Tk ::= X | ""`.
  void lower_repeat(const expr& e, alternative& out) {
    const std::uint64_t copies = e.max == expr::unbounded ? e.min + 1u : e.max;
    budget_.charge_work(copies);
    budget_.charge_memory(copies * bytes_per_helper_copy);
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

  // Element and rule memory per copy of a repeat lowered as rules (a rule, two alternatives).
  static constexpr std::uint64_t bytes_per_helper_copy = 160;

  void emit(compiled_grammar& g) {
    g.rule_names_ = names_;
    g.rule_alts_.resize(names_.size());
    // Minimized DFAs are numbered canonically: equal languages give equal tables, one DFA.
    // Found by a hash of the table, then compared (no copy of the tables kept).
    std::unordered_multimap<std::uint64_t, std::uint32_t> dfa_ids;
    for (std::uint32_t r = 0; r < lowered_.size(); ++r) {
      for (const alternative& a : lowered_[r]) {
        budget_.charge_work(a.size() + 1);
        budget_.charge_memory((a.size() + 2) * sizeof(element));
        g.rule_alts_[r].push_back(static_cast<std::uint32_t>(g.elements_.size()));
        for (const item& it : a) {
          if (it.is_ref) {
            g.elements_.push_back({element::kind::rule_ref, it.rule});
            continue;
          }
          byte_dfa d = it.dfa ? std::move(*it.dfa) : build_dfa(it.regular, budget_);
          g.elements_.push_back({element::kind::terminal, dfa_index(g, dfa_ids, std::move(d))});
        }
        g.elements_.push_back({element::kind::end, r});
      }
    }
  }

  // The index of `d` in g's DFAs, added unless an equal one is there.
  std::uint32_t dfa_index(compiled_grammar& g,
                          std::unordered_multimap<std::uint64_t, std::uint32_t>& ids, byte_dfa d) {
    budget_.charge_work(d.next.size() / 8);
    std::uint64_t h = d.accepting.size() ^ (std::uint64_t{d.copies_min} << 32) ^ d.copies_max;
    for (std::uint32_t t : d.next) h = (h ^ t) * 0x100000001B3ull;
    for (auto [it, end] = ids.equal_range(h); it != end; ++it) {
      const byte_dfa& other = g.dfas_[it->second];
      if (other.next == d.next && other.accepting == d.accepting &&
          other.copies_min == d.copies_min && other.copies_max == d.copies_max) {
        budget_.release_memory(table_bytes(d));
        return it->second;
      }
    }
    const auto index = static_cast<std::uint32_t>(g.dfas_.size());
    ids.emplace(h, index);
    g.dfas_.push_back(std::move(d));
    return index;
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
          if (!d.is_live(0) && !d.accepts(0)) {
            throw grammar_error(
                fmt::format("grammar: a part of rule '{}' matches nothing", display(r)));
          }
        }
      }
    }
    std::vector<char> finishes(n, 0);
    for (bool changed = true; changed;) {
      changed = false;
      budget_.charge_work(g.elements().size() + n);
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
    std::string stuck;  // the rules that cannot finish, in the order reached (the first few)
    std::size_t num_stuck = 0;
    while (!todo.empty()) {
      const std::uint32_t r = todo.back();
      todo.pop_back();
      if (!finishes[r] && ++num_stuck <= 10) {
        stuck += fmt::format("{}'{}'", stuck.empty() ? "" : ", ", display(r));
      }
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

  // Per rule: it can match the empty string.
  std::vector<char> nullable_rules(const compiled_grammar& g) {
    const std::uint32_t n = g.num_rules();
    std::vector<char> nullable(n, 0);
    for (bool changed = true; changed;) {
      changed = false;
      budget_.charge_work(g.elements().size() + n);
      for (std::uint32_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (std::uint32_t start : g.alternatives(r)) {
          std::uint32_t e = start;
          while (g.elements()[e].k != element::kind::end &&
                 element_nullable(g, nullable, g.elements()[e])) {
            ++e;
          }
          if (g.elements()[e].k == element::kind::end) {
            nullable[r] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    return nullable;
  }

  static bool element_nullable(const compiled_grammar& g, const std::vector<char>& nullable,
                               const element& el) {
    if (el.k == element::kind::terminal) return g.dfas()[el.index].accepts(0);
    return el.k == element::kind::rule_ref && nullable[el.index] != 0;
  }

  // A rule is left-recursive when it can reach itself without consuming a byte: through the
  // first element of an alternative, or a later one after elements that can all be empty.
  void check_left_recursion(const compiled_grammar& g, const std::vector<char>& nullable) {
    const std::uint32_t n = g.num_rules();
    auto element_nullable = [&](const element& el) {
      return grammar_builder::element_nullable(g, nullable, el);
    };
    budget_.charge_work(2 * g.elements().size() + n);
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

  // How many parse stacks continuing at one element can start before a byte: a terminal is one,
  // a reference adds its rule's alternatives, and one that can match nothing adds what follows
  // it. Each is a stack the matcher steps and a token split the mask cache computes, so a
  // position with thousands (an alternation of thousands of objects, a repeat of a part that
  // can be empty) would cost seconds a decoding step; over max_branches it is refused. The
  // references at left edges form no cycle (left recursion is refused first).
  void check_branches(const compiled_grammar& g, const std::vector<char>& nullable) {
    const std::uint64_t cap = budget_.limits().max_branches;
    const std::vector<element>& els = g.elements();
    constexpr std::uint64_t unknown = ~std::uint64_t{0};
    std::vector<std::uint64_t> fan(els.size(), unknown);
    std::vector<char> open(els.size(), 0);
    std::vector<std::uint32_t> todo;
    // Every element, then the root's alternatives (where matching starts: no element refers).
    for (std::uint32_t e0 = 0; e0 <= els.size(); ++e0) {
      if (e0 == els.size()) {
        std::uint64_t sum = 0;
        for (std::uint32_t alt : g.alternatives(g.root())) sum = std::min(sum + fan[alt], cap + 1);
        if (sum > cap) fail_branches(g.root(), cap);
        break;
      }
      todo.push_back(e0);
      while (!todo.empty()) {
        const std::uint32_t e = todo.back();
        if (fan[e] != unknown) {
          todo.pop_back();
          continue;
        }
        open[e] = 1;
        std::uint64_t sum = 0;
        bool ready = true;
        const auto add = [&](std::uint32_t d) {
          budget_.charge_work(1);
          if (fan[d] == unknown && !open[d]) {
            todo.push_back(d);
            ready = false;
          } else if (fan[d] != unknown) {
            sum = std::min(sum + fan[d], cap + 1);
          }
        };
        const element& el = els[e];
        if (el.k == element::kind::terminal) {
          if (g.dfas()[el.index].is_live(0)) sum = 1;
          if (g.dfas()[el.index].accepts(0)) add(e + 1);
        } else if (el.k == element::kind::rule_ref) {
          for (std::uint32_t alt : g.alternatives(el.index)) add(alt);
          if (nullable[el.index]) add(e + 1);
        }
        if (!ready) continue;
        fan[e] = sum;
        todo.pop_back();
        if (sum > cap) {
          std::uint32_t end = e;
          while (els[end].k != element::kind::end) ++end;
          fail_branches(els[end].index, cap);
        }
      }
    }
  }

  [[noreturn]] void fail_branches(std::uint32_t rule, std::uint64_t cap) const {
    throw grammar_error(
        fmt::format("grammar: a position in rule '{}' can go on in over {} ways at once "
                    "(alternatives, and parts that can match nothing): too costly to mask",
                    display(rule), cap),
        "branches");
  }

  // A helper rule is named after its base ("group~12"); users see the rule they wrote.
  std::string display(std::uint32_t r) const { return names_[r]; }

  compile_budget& budget_;
  std::map<std::string, std::uint32_t> ids_;
  std::vector<std::uint32_t> num_refs_;       // per rule: references to it in the bodies
  std::vector<std::optional<expr>> regular_;  // per rule: its inlined body, when regular
  std::vector<std::uint64_t> regular_size_;   // per regular rule: its estimated NFA states
  std::uint64_t inline_cap_ = max_inline_nfa;  // inline_into's size limit, for the call now
  std::vector<std::string> names_;
  std::vector<std::vector<alternative>> lowered_;
};

std::shared_ptr<const compiled_grammar> compiled_grammar::compile(
    const std::vector<gbnf_rule>& rules, const std::string& root, compile_budget& budget) {
  return grammar_builder(budget).build(rules, root);
}

std::shared_ptr<const compiled_grammar> compiled_grammar::compile(
    const std::vector<gbnf_rule>& rules, const std::string& root, const compile_limits& limits) {
  compile_budget budget(limits);
  return compile(rules, root, budget);
}

std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text,
                                                     compile_budget& budget) {
  return compiled_grammar::compile(parse_gbnf(text, budget), "root", budget);
}

std::shared_ptr<const compiled_grammar> compile_gbnf(std::string_view text,
                                                     const compile_limits& limits) {
  compile_budget budget(limits);
  return compile_gbnf(text, budget);
}

}  // namespace courier::grammar
