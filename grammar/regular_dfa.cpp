#include "grammar/regular_dfa.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "grammar/grammar_error.hpp"
#include "grammar/utf8_ranges.hpp"

namespace courier::grammar {

namespace {

// Thompson's construction over byte ranges. State 0 is the start.
class nfa_builder {
 public:
  struct edge {
    std::uint8_t lo, hi;
    std::uint32_t to;
  };
  std::vector<std::vector<edge>> edges;
  std::vector<std::vector<std::uint32_t>> eps;

  explicit nfa_builder(compile_budget& budget) : budget_(budget) {}
  nfa_builder(const nfa_builder&) = delete;
  nfa_builder& operator=(const nfa_builder&) = delete;
  ~nfa_builder() { budget_.release_memory(charged_); }

  std::uint32_t add() {
    if (edges.size() >= max_nfa_states) {
      throw grammar_error(fmt::format(
          "grammar: a regular part needs over {} automaton states (a repeat bound too large?)",
          max_nfa_states));
    }
    // A state: its two vectors, an edge or two, and its share of the closure marks.
    charge(bytes_per_state);
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<std::uint32_t>(edges.size() - 1);
  }

  // Memory the construction holds until the builder goes (and one step of work per 64 bytes).
  void charge(std::uint64_t bytes) {
    budget_.charge_memory(bytes);
    budget_.charge_work(1 + bytes / 64);
    charged_ += bytes;
  }
  compile_budget& budget() { return budget_; }

  // Adds e's fragment starting at `from`; returns the state where it ends. The depth is
  // bounded by the parsers' max_nesting (checked again here: this walks untrusted trees).
  std::uint32_t build(const expr& e, std::uint32_t from, int depth) {
    if (depth > 4 * max_nesting) throw grammar_error("grammar: expression nested too deep");
    switch (e.k) {
      case expr::kind::empty:
        return from;
      case expr::kind::literal: {
        std::uint32_t cur = from;
        for (char c : e.text) {
          const std::uint32_t next = add();
          const auto b = static_cast<std::uint8_t>(c);
          edges[cur].push_back({b, b, next});
          cur = next;
        }
        return cur;
      }
      case expr::kind::char_class: {
        const std::uint32_t end = add();
        for (const code_point_range& r : e.ranges) {
          for (const std::vector<byte_range>& seq : utf8_sequences(r)) {
            std::uint32_t cur = from;
            for (std::size_t i = 0; i < seq.size(); ++i) {
              const std::uint32_t next = i + 1 == seq.size() ? end : add();
              edges[cur].push_back({seq[i].first, seq[i].last, next});
              cur = next;
            }
          }
        }
        return end;
      }
      case expr::kind::sequence: {
        std::uint32_t cur = from;
        for (const expr& c : e.children) cur = build(c, cur, depth + 1);
        return cur;
      }
      case expr::kind::alternation: {
        const std::uint32_t end = add();
        for (const expr& c : e.children) {
          const std::uint32_t start = add();
          eps[from].push_back(start);
          eps[build(c, start, depth + 1)].push_back(end);
        }
        return end;
      }
      case expr::kind::repeat: {
        std::uint32_t cur = from;
        for (std::uint32_t i = 0; i < e.min; ++i) cur = build(e.children[0], cur, depth + 1);
        if (e.max == expr::unbounded) {
          const std::uint32_t loop = add();
          eps[cur].push_back(loop);
          eps[build(e.children[0], loop, depth + 1)].push_back(loop);
          return loop;
        }
        // x{0,k} as (x (x (x)?)?)?: each optional copy may jump straight to the end, so an
        // epsilon closure holds one jump, not the k-long chain `x? x? x?` would give (which made
        // the subset construction quadratic in k).
        const std::uint32_t end = add();
        for (std::uint32_t i = e.min; i < e.max; ++i) {
          eps[cur].push_back(end);
          cur = build(e.children[0], cur, depth + 1);
        }
        eps[cur].push_back(end);
        return end;
      }
      case expr::kind::rule_ref:
        break;
    }
    throw std::logic_error("build_dfa: a rule reference in a regular part");
  }

  // Adds every state reachable from `set` by epsilon moves, and sorts it. The marks are
  // generation-stamped, so a closure costs its own size, not the NFA's.
  void close(std::vector<std::uint32_t>& set, std::uint64_t& work) {
    const std::uint64_t work_before = work;
    if (mark_.size() != edges.size()) mark_.assign(edges.size(), 0);
    if (++generation_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      generation_ = 1;
    }
    todo_ = set;
    for (std::uint32_t s : set) mark_[s] = generation_;
    while (!todo_.empty()) {
      const std::uint32_t s = todo_.back();
      todo_.pop_back();
      work += 1 + eps[s].size();
      for (std::uint32_t t : eps[s]) {
        if (mark_[t] != generation_) {
          mark_[t] = generation_;
          set.push_back(t);
          todo_.push_back(t);
        }
      }
    }
    std::sort(set.begin(), set.end());
    work += set.size();
    budget_.charge_work(work - work_before);
  }

 private:
  static constexpr std::uint64_t bytes_per_state = 96;
  compile_budget& budget_;
  std::uint64_t charged_ = 0;
  std::vector<std::uint32_t> mark_;
  std::uint32_t generation_ = 0;
  std::vector<std::uint32_t> todo_;
};

constexpr std::uint32_t max_minimized_states = 256;
constexpr int max_minimize_rounds = 48;

// Over this many steps of the subset construction, a regular part is refused: a request's
// regex or schema must not hold an admission thread for long (about 0.1-0.5 s at most here).
constexpr std::uint64_t max_determinize_work = std::uint64_t{1} << 26;

void charge(std::uint64_t work) {
  if (work > max_determinize_work) {
    throw grammar_error("grammar: a regular part is too complex to compile (its automaton takes "
                        "too many steps to build)");
  }
}

// The DFA table's bytes per state: 256 transitions and the accepting and live flags.
constexpr std::uint64_t table_bytes_per_state = 256 * sizeof(std::uint32_t) + 2;

// The subset construction. The DFA's table is charged to the budget (the caller releases it
// when the table goes); the state sets are charged to the NFA builder, which releases them.
byte_dfa determinize(nfa_builder& n, std::uint32_t final_state) {
  compile_budget& budget = n.budget();
  std::uint64_t work = 0;
  byte_dfa d;
  std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
  std::vector<std::vector<std::uint32_t>> sets;
  std::vector<std::uint32_t> start{0};
  n.close(start, work);
  n.charge(2 * sizeof(std::uint32_t) * start.size() + 128);
  ids.emplace(start, 0);
  sets.push_back(std::move(start));
  budget.charge_memory(table_bytes_per_state);
  // The bytes split into intervals at every edge's ends: the bytes of one interval go to the
  // same set, so each interval's set is built once (a class of code points is a few wide byte
  // ranges: bucketing byte by byte cost 256 steps an NFA state).
  std::vector<int> cuts;
  std::vector<std::vector<std::uint32_t>> buckets;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const std::uint64_t bucket_work = work;
    cuts.assign({0, 256});
    for (std::uint32_t s : sets[i]) {
      for (const auto& e : n.edges[s]) {
        cuts.push_back(e.lo);
        cuts.push_back(e.hi + 1);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    buckets.resize(std::max(buckets.size(), cuts.size()));
    for (auto& b : buckets) b.clear();
    for (std::uint32_t s : sets[i]) {
      for (const auto& e : n.edges[s]) {
        const auto first = static_cast<std::size_t>(
            std::lower_bound(cuts.begin(), cuts.end(), int{e.lo}) - cuts.begin());
        for (std::size_t k = first; cuts[k] <= e.hi; ++k) buckets[k].push_back(e.to);
        work += 2 + cuts.size() / 16;
      }
    }
    work += cuts.size();
    budget.charge_work(work - bucket_work);
    charge(work);
    d.next.resize((i + 1) * 256, byte_dfa::dead);
    d.accepting.push_back(
        std::binary_search(sets[i].begin(), sets[i].end(), final_state) ? 1 : 0);
    std::vector<std::uint32_t> previous_bucket;
    std::uint32_t previous_id = byte_dfa::dead;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      std::vector<std::uint32_t>& bucket = buckets[k];
      if (bucket.empty()) continue;
      std::sort(bucket.begin(), bucket.end());
      bucket.erase(std::unique(bucket.begin(), bucket.end()), bucket.end());
      if (bucket != previous_bucket) {
        previous_bucket = bucket;
        std::vector<std::uint32_t> target = bucket;
        n.close(target, work);
        charge(work);
        auto [it, inserted] = ids.emplace(target, static_cast<std::uint32_t>(sets.size()));
        if (inserted) {
          if (sets.size() >= max_dfa_states) {
            throw grammar_error(fmt::format(
                "grammar: a regular part needs over {} DFA states", max_dfa_states));
          }
          n.charge(2 * sizeof(std::uint32_t) * target.size() + 128);
          budget.charge_memory(table_bytes_per_state);
          sets.push_back(std::move(target));
        }
        previous_id = it->second;
      }
      for (int b = cuts[k]; b < cuts[k + 1]; ++b)
        d.next[i * 256 + static_cast<std::size_t>(b)] = previous_id;
    }
  }
  return d;
}

// Redirects transitions into states that cannot reach an accepting one to dead: a search
// backwards from the accepting states over the reversed transitions (linear in the table; a
// fixpoint over the states took a pass per state of a long chain).
void prune(byte_dfa& d, compile_budget& budget) {
  const std::uint32_t n = d.table_states();
  budget.charge_work(std::uint64_t{n} * 256 * 2);
  // Predecessors, each once per state (consecutive bytes usually go to the same state).
  std::vector<std::uint32_t> begin(n + 1, 0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (to, from)
  for (std::uint32_t s = 0; s < n; ++s) {
    std::uint32_t previous = byte_dfa::dead;
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t t = d.next[s * 256 + b];
      if (t != byte_dfa::dead && t != previous) edges.emplace_back(t, s);
      previous = t;
    }
  }
  budget.charge_memory(edges.size() * 12);
  budget.release_memory(edges.size() * 12);
  std::sort(edges.begin(), edges.end());
  for (const auto& [to, unused] : edges) ++begin[to + 1];
  for (std::uint32_t s = 0; s < n; ++s) begin[s + 1] += begin[s];
  std::vector<char> useful(d.accepting.begin(), d.accepting.end());
  std::vector<std::uint32_t> todo;
  for (std::uint32_t s = 0; s < n; ++s) {
    if (useful[s]) todo.push_back(s);
  }
  while (!todo.empty()) {
    const std::uint32_t t = todo.back();
    todo.pop_back();
    for (std::uint32_t k = begin[t]; k < begin[t + 1]; ++k) {
      const std::uint32_t s = edges[k].second;
      if (!useful[s]) {
        useful[s] = 1;
        todo.push_back(s);
      }
    }
  }
  for (std::uint32_t& t : d.next) {
    if (t != byte_dfa::dead && !useful[t]) t = byte_dfa::dead;
  }
}

// Moore's partition refinement; renumbers so that the start stays state 0 and the remaining
// states follow in order of first appearance.
// nullopt when the refinement has not settled within max_minimize_rounds (a long chain of
// states, as a long literal makes: a round per state of it).
std::optional<byte_dfa> minimize(const byte_dfa& d, compile_budget& budget) {
  const std::uint32_t n = d.table_states();
  std::vector<std::uint32_t> cls(n);
  for (std::uint32_t s = 0; s < n; ++s) cls[s] = d.accepting[s];
  std::uint32_t num_classes = 0;
  // Each state's transitions as runs of bytes to one state (byte, state), once: a round then
  // costs the runs, not 256 bytes a state.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
  std::vector<std::uint32_t> runs_begin{0};
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t t = d.next[s * 256 + b];
      if (b == 0 || t != d.next[s * 256 + b - 1]) runs.emplace_back(b, t);
    }
    runs_begin.push_back(static_cast<std::uint32_t>(runs.size()));
  }
  budget.charge_work(std::uint64_t{n} * 256);
  // A round builds a signature of about two words a run (held in a map while the round runs).
  const std::uint64_t round_bytes = runs.size() * 2 * sizeof(std::uint32_t) + n * 64;
  for (int round = 0;; ++round) {
    if (round > max_minimize_rounds) return std::nullopt;
    budget.charge_work(runs.size() * 4 + n);
    budget.charge_memory(round_bytes);
    budget.release_memory(round_bytes);
    std::map<std::vector<std::uint32_t>, std::uint32_t> sig_ids;
    std::vector<std::uint32_t> next_cls(n);
    for (std::uint32_t s = 0; s < n; ++s) {
      // The state's class, then its transitions' classes as runs (byte, class) where the class
      // changes: the same for equal states, and short (a class of bytes is one run).
      std::vector<std::uint32_t> sig{cls[s]};
      std::uint32_t previous = 0xFFFFFFFEu;
      for (std::uint32_t k = runs_begin[s]; k < runs_begin[s + 1]; ++k) {
        const std::uint32_t t = runs[k].second;
        const std::uint32_t c = t == byte_dfa::dead ? byte_dfa::dead : cls[t];
        if (c != previous) {
          sig.push_back(runs[k].first);
          sig.push_back(c);
          previous = c;
        }
      }
      next_cls[s] = sig_ids.emplace(std::move(sig), static_cast<std::uint32_t>(sig_ids.size()))
                        .first->second;
    }
    const auto count = static_cast<std::uint32_t>(sig_ids.size());
    cls = std::move(next_cls);
    if (count == num_classes) break;
    num_classes = count;
  }
  std::vector<std::uint32_t> order(num_classes, byte_dfa::dead);
  std::vector<std::uint32_t> rep;
  // Number classes by a walk from the start, so the start is 0.
  std::vector<std::uint32_t> todo{0};
  order[cls[0]] = 0;
  rep.push_back(0);
  for (std::size_t i = 0; i < rep.size(); ++i) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t t = d.next[rep[i] * 256 + b];
      if (t == byte_dfa::dead || order[cls[t]] != byte_dfa::dead) continue;
      order[cls[t]] = static_cast<std::uint32_t>(rep.size());
      rep.push_back(t);
    }
  }
  byte_dfa m;
  budget.charge_memory(rep.size() * table_bytes_per_state);
  m.next.assign(rep.size() * 256, byte_dfa::dead);
  for (std::size_t i = 0; i < rep.size(); ++i) {
    m.accepting.push_back(d.accepting[rep[i]]);
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t t = d.next[rep[i] * 256 + b];
      if (t != byte_dfa::dead) m.next[i * 256 + b] = order[cls[t]];
    }
  }
  return m;
}

}  // namespace

byte_dfa build_dfa(const expr& regular, compile_budget& budget) {
  nfa_builder n(budget);
  n.add();
  const std::uint32_t final_state = n.build(regular, 0, 0);
  byte_dfa d = determinize(n, final_state);
  prune(d, budget);
  // Moore's refinement takes a round per state of the longest chain (a long literal is a chain
  // as long), each round over every state and byte: past a few hundred states, or a few dozen
  // rounds, it would cost more than the masks it saves. Such DFAs stay as the subset
  // construction made them (still deterministic, so equal parts still give equal tables).
  std::optional<byte_dfa> minimized;
  if (d.table_states() <= max_minimized_states) minimized = minimize(d, budget);
  byte_dfa m;
  if (minimized) {
    m = std::move(*minimized);
    budget.release_memory(std::uint64_t{d.table_states()} * table_bytes_per_state);
  } else {
    m = std::move(d);
  }
  m.live.assign(m.table_states(), 0);
  budget.charge_work(std::uint64_t{m.table_states()} * 64);
  for (std::uint32_t s = 0; s < m.table_states(); ++s) {
    for (std::uint32_t b = 0; b < 256 && !m.live[s]; ++b) {
      if (m.next[s * 256 + b] != byte_dfa::dead) m.live[s] = 1;
    }
  }
  return m;
}

std::optional<byte_dfa> build_counted_dfa(const expr& x, std::uint32_t min, std::uint32_t max,
                                          compile_budget& budget) {
  byte_dfa d = build_dfa(x, budget);
  bool prefix_free = !d.accepting[0];
  for (std::uint32_t s = 0; s < d.table_states() && prefix_free; ++s) {
    if (d.accepting[s] && d.live[s]) prefix_free = false;
  }
  if (!prefix_free || max == 0 || (max != expr::unbounded && max < min)) {
    budget.release_memory(table_bytes(d));
    return std::nullopt;
  }
  d.copies_min = min;
  d.copies_max = max == expr::unbounded ? byte_dfa::unbounded : max;
  return d;
}

}  // namespace courier::grammar
