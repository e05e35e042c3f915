#include "grammar/regular_dfa.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

  std::uint32_t add() {
    if (edges.size() >= max_nfa_states) {
      throw grammar_error(fmt::format(
          "grammar: a regular part needs over {} automaton states (a repeat bound too large?)",
          max_nfa_states));
    }
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<std::uint32_t>(edges.size() - 1);
  }

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
  }

 private:
  std::vector<std::uint32_t> mark_;
  std::uint32_t generation_ = 0;
  std::vector<std::uint32_t> todo_;
};

constexpr std::uint32_t max_minimized_states = 256;

// Over this many steps of the subset construction, a regular part is refused: a request's
// regex or schema must not hold an admission thread for long (about 0.1-0.5 s at most here).
constexpr std::uint64_t max_determinize_work = std::uint64_t{1} << 26;

void charge(std::uint64_t work) {
  if (work > max_determinize_work) {
    throw grammar_error("grammar: a regular part is too complex to compile (its automaton takes "
                        "too many steps to build)");
  }
}

byte_dfa determinize(nfa_builder& n, std::uint32_t final_state) {
  std::uint64_t work = 0;
  byte_dfa d;
  std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
  std::vector<std::vector<std::uint32_t>> sets;
  std::vector<std::uint32_t> start{0};
  n.close(start, work);
  ids.emplace(start, 0);
  sets.push_back(std::move(start));
  std::vector<std::vector<std::uint32_t>> buckets(256);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    for (auto& b : buckets) b.clear();
    for (std::uint32_t s : sets[i]) {
      for (const auto& e : n.edges[s]) {
        work += static_cast<std::uint64_t>(e.hi - e.lo) + 1;
        for (int b = e.lo; b <= e.hi; ++b) buckets[static_cast<std::size_t>(b)].push_back(e.to);
      }
    }
    charge(work);
    d.next.resize((i + 1) * 256, byte_dfa::dead);
    d.accepting.push_back(
        std::binary_search(sets[i].begin(), sets[i].end(), final_state) ? 1 : 0);
    std::vector<std::uint32_t> previous_bucket;
    std::uint32_t previous_id = byte_dfa::dead;
    for (std::size_t b = 0; b < 256; ++b) {
      if (buckets[b].empty()) continue;
      std::sort(buckets[b].begin(), buckets[b].end());
      buckets[b].erase(std::unique(buckets[b].begin(), buckets[b].end()), buckets[b].end());
      if (buckets[b] != previous_bucket) {
        previous_bucket = buckets[b];
        std::vector<std::uint32_t> target = buckets[b];
        n.close(target, work);
        charge(work);
        auto [it, inserted] = ids.emplace(target, static_cast<std::uint32_t>(sets.size()));
        if (inserted) {
          if (sets.size() >= max_dfa_states) {
            throw grammar_error(fmt::format(
                "grammar: a regular part needs over {} DFA states", max_dfa_states));
          }
          sets.push_back(std::move(target));
        }
        previous_id = it->second;
      }
      d.next[i * 256 + b] = previous_id;
    }
  }
  return d;
}

// Redirects transitions into states that cannot reach an accepting one to dead.
void prune(byte_dfa& d) {
  const std::uint32_t n = d.num_states();
  std::vector<char> useful(d.accepting.begin(), d.accepting.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t s = 0; s < n; ++s) {
      if (useful[s]) continue;
      for (std::uint32_t b = 0; b < 256; ++b) {
        const std::uint32_t t = d.next[s * 256 + b];
        if (t != byte_dfa::dead && useful[t]) {
          useful[s] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  for (std::uint32_t& t : d.next) {
    if (t != byte_dfa::dead && !useful[t]) t = byte_dfa::dead;
  }
}

// Moore's partition refinement; renumbers so that the start stays state 0 and the remaining
// states follow in order of first appearance.
byte_dfa minimize(const byte_dfa& d) {
  const std::uint32_t n = d.num_states();
  std::vector<std::uint32_t> cls(n);
  for (std::uint32_t s = 0; s < n; ++s) cls[s] = d.accepting[s];
  std::uint32_t num_classes = 0;
  while (true) {
    std::map<std::vector<std::uint32_t>, std::uint32_t> sig_ids;
    std::vector<std::uint32_t> next_cls(n);
    for (std::uint32_t s = 0; s < n; ++s) {
      std::vector<std::uint32_t> sig(257);
      sig[0] = cls[s];
      for (std::uint32_t b = 0; b < 256; ++b) {
        const std::uint32_t t = d.next[s * 256 + b];
        sig[b + 1] = t == byte_dfa::dead ? byte_dfa::dead : cls[t];
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

byte_dfa build_dfa(const expr& regular) {
  nfa_builder n;
  n.add();
  const std::uint32_t final_state = n.build(regular, 0, 0);
  byte_dfa d = determinize(n, final_state);
  prune(d);
  // Moore's refinement takes a round per state of the longest chain (a long literal is a chain
  // as long), each round over every state and byte: past a few hundred states it would cost more
  // than the masks it saves. Larger DFAs stay as the subset construction made them (still
  // deterministic, so equal parts still give equal tables).
  byte_dfa m = d.num_states() <= max_minimized_states ? minimize(d) : std::move(d);
  m.live.assign(m.num_states(), 0);
  for (std::uint32_t s = 0; s < m.num_states(); ++s) {
    for (std::uint32_t b = 0; b < 256 && !m.live[s]; ++b) {
      if (m.next[s * 256 + b] != byte_dfa::dead) m.live[s] = 1;
    }
  }
  return m;
}

}  // namespace courier::grammar
