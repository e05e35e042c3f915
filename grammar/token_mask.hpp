#pragma once
// Which tokens keep the output inside the grammar: a bitmask over token ids per decoding step.
//
// As XGrammar does, most of the work is done once per grammar position, not per step: for each
// (terminal element, DFA state, where its rule returns to) that tops a stack, the vocabulary
// splits into tokens accepted whatever lies below those two frames (they never finish the
// caller's rule, or finish it exactly at their last byte), tokens rejected whatever lies below
// (they fail before it could end), and the uncertain rest (the caller's rule ends inside them,
// so the stack below decides). Knowing the caller's continuation settles what follows a
// rule's last element (a string's closing quote, trailing whitespace), where most tokens would
// otherwise be uncertain. That
// split is computed on first use and kept in the mask_cache shared by every request with the
// same grammar; a step then costs an OR of the accepted bitsets of its stacks plus a trie-
// ordered check of the uncertain tokens against the real stacks.
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "grammar/matcher.hpp"
#include "grammar/token_vocabulary.hpp"

namespace courier::grammar {

// One bit per token id: bit (id % 64) of word id / 64.
using token_bitmask = std::vector<std::uint64_t>;
inline std::size_t bitmask_words(std::uint32_t id_bound) { return (id_bound + 63) / 64; }
inline bool mask_has(const token_bitmask& m, std::uint32_t id) {
  return (m[id / 64] >> (id % 64)) & 1u;
}
inline void mask_set(token_bitmask& m, std::uint32_t id) {
  m[id / 64] |= std::uint64_t{1} << (id % 64);
}

class mask_cache {
 public:
  struct entry {
    token_bitmask accepted;
    std::vector<std::uint32_t> uncertain;  // token ids, in trie (byte) order
  };

  // max_bytes: what its entries may hold at most (0: no bound); past it the least recently used
  // go (a step that needs one again computes it again: slower, never different).
  mask_cache(std::shared_ptr<const compiled_grammar> g,
             std::shared_ptr<const token_vocabulary> vocab, std::size_t max_bytes = 0);

  const compiled_grammar& grammar() const { return *grammar_; }
  const token_vocabulary& vocabulary() const { return *vocab_; }
  const std::shared_ptr<const compiled_grammar>& grammar_ptr() const { return grammar_; }
  const std::shared_ptr<const token_vocabulary>& vocabulary_ptr() const { return vocab_; }

  // The split for a stack topped by (element, dfa_state) whose rule returns to the element
  // `return_to` (matcher::no_parent: the root ends there); computed on first use, or again
  // after it was dropped. Thread-safe; the entry lives as long as the caller holds it.
  std::shared_ptr<const entry> get(std::uint32_t element, std::uint32_t dfa_state,
                                   std::uint32_t return_to);
  std::size_t num_entries() const;
  std::size_t bytes() const;  // what the kept entries hold
  std::uint64_t num_dropped() const;  // entries dropped to stay within max_bytes

 private:
  using key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  struct slot {
    std::shared_ptr<const entry> e;
    std::list<key>::iterator used;  // its place in lru_
  };
  entry compute(std::uint32_t element, std::uint32_t dfa_state, std::uint32_t return_to);
  static std::size_t bytes_of(const entry& e);
  // The state of the element's DFA that stands for `dfa_state` in keys (under mutex_).
  std::uint32_t representative(std::uint32_t element, std::uint32_t dfa_state);

  std::shared_ptr<const compiled_grammar> grammar_;
  std::shared_ptr<const token_vocabulary> vocab_;
  std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<key, slot> entries_;
  std::list<key> lru_;  // most recently used first
  std::size_t bytes_ = 0;
  std::uint64_t dropped_ = 0;
  // Out-of-context frames; used under mutex_, made anew when entries are dropped (its interned
  // frames would otherwise grow with every position ever met).
  std::unique_ptr<matcher> scratch_;
  // Per DFA, computed on first use: each state's representative among the states no string of
  // at most the vocabulary's longest token tells apart (short_string_classes).
  std::vector<std::vector<std::uint32_t>> representatives_;
};

// For each state of `d`, the smallest state that no string of at most `depth` bytes tells apart
// from it: along every such string both stay alive as long and accept after the same prefixes.
// A token of at most `depth` bytes is then split the same from either (mask_cache keys on it):
// the states of a counted repeat (`[a-z ]{0,4000}`) farther than `depth` bytes from its end are
// one position, not thousands. Moore's refinement cut at `depth` rounds, over the DFA's byte
// classes (bytes no state tells apart).
// `d` plain (its table).
std::vector<std::uint32_t> short_string_classes(const byte_dfa& d, std::size_t depth);

// The same for a counted DFA's state `s`, by arithmetic: the counts from which no string of at
// most `depth` bytes reaches copies_min are one (count 0), and so are those at or past
// copies_min from which none reaches copies_max (count copies_min); the rest stand alone.
std::uint32_t counted_representative(const byte_dfa& d, std::uint32_t s, std::size_t depth);

// Sets `mask` (resized to the vocabulary's id bound) to the tokens `m` may accept next: those
// whose bytes it takes, and the end-of-sequence ids when it can end. `m` gains frames (the
// checks of uncertain tokens run on its stacks) but its state does not change.
void fill_token_mask(matcher& m, mask_cache& cache, token_bitmask& mask);

// The same by brute force, each token on its own: the reference for tests.
void fill_token_mask_reference(matcher& m, const token_vocabulary& vocab, token_bitmask& mask);

}  // namespace courier::grammar
