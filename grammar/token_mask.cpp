#include "grammar/token_mask.hpp"

#include <algorithm>
#include <map>

namespace courier::grammar {

namespace {

// Steps `m` from `start` through the bytes of the tokens in `ids` (in trie order, so each
// shares a prefix with the one before and reuses its states); sets the bit of each token the
// state takes whole. Tokens already set in `mask` are skipped.
void check_tokens(matcher& m, const matcher::state& start, const std::vector<std::uint32_t>& ids,
                  const token_vocabulary& vocab, token_bitmask& mask) {
  std::vector<matcher::state> states(vocab.max_token_bytes() + 1);
  states[0] = start;
  const std::string* previous = nullptr;
  std::size_t valid = 0;  // states[0..valid] hold the previous token's prefixes
  for (std::uint32_t id : ids) {
    if (mask_has(mask, id)) continue;
    const std::string& b = vocab.bytes(id);
    std::size_t d = 0;
    if (previous != nullptr) {
      while (d < valid && d < b.size() && (*previous)[d] == b[d]) ++d;
    }
    bool ok = true;
    for (; d < b.size(); ++d) {
      if (!m.step(states[d], static_cast<std::uint8_t>(b[d]), states[d + 1])) {
        ok = false;
        break;
      }
    }
    valid = d;  // states[0..d] are this token's prefixes
    previous = &b;
    if (ok) mask_set(mask, id);
  }
}

}  // namespace

mask_cache::mask_cache(std::shared_ptr<const compiled_grammar> g,
                       std::shared_ptr<const token_vocabulary> vocab, std::size_t max_bytes)
    : grammar_(std::move(g)), vocab_(std::move(vocab)), max_bytes_(max_bytes),
      scratch_(std::make_unique<matcher>(grammar_)) {}

std::size_t mask_cache::num_entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::size_t mask_cache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

std::uint64_t mask_cache::num_dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::size_t mask_cache::bytes_of(const entry& e) {
  return sizeof(entry) + sizeof(slot) + 64 + e.accepted.size() * sizeof(std::uint64_t) +
         e.uncertain.size() * sizeof(std::uint32_t);
}

std::vector<std::uint32_t> short_string_classes(const byte_dfa& d, std::size_t depth) {
  const std::uint32_t n = d.table_states();
  // Byte classes: bytes whose columns (the state after them, from every state) are equal.
  std::vector<std::uint8_t> byte_rep;  // a representative byte of each class
  {
    std::map<std::vector<std::uint32_t>, std::uint8_t> columns;
    std::vector<std::uint32_t> column(n);
    for (int b = 0; b < 256; ++b) {
      for (std::uint32_t s = 0; s < n; ++s) column[s] = d.next[std::size_t{s} * 256 + b];
      if (columns.emplace(column, static_cast<std::uint8_t>(b)).second) {
        byte_rep.push_back(static_cast<std::uint8_t>(b));
      }
    }
  }
  std::vector<std::uint32_t> cls(n);
  for (std::uint32_t s = 0; s < n; ++s) cls[s] = d.accepting[s] ? 1 : 0;
  std::size_t num_classes = 0;
  std::vector<std::uint32_t> sig;
  for (std::size_t round = 0; round <= depth; ++round) {
    std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
    std::vector<std::uint32_t> next_cls(n);
    for (std::uint32_t s = 0; s < n; ++s) {
      sig.assign(1, cls[s]);
      if (round > 0) {  // round r: strings of up to r bytes
        for (std::uint8_t b : byte_rep) {
          const std::uint32_t t = d.next[std::size_t{s} * 256 + b];
          sig.push_back(t == byte_dfa::dead ? byte_dfa::dead : cls[t]);
        }
      }
      next_cls[s] = ids.emplace(sig, static_cast<std::uint32_t>(ids.size())).first->second;
    }
    cls.swap(next_cls);
    if (round > 0 && ids.size() == num_classes) break;  // stable: no longer string splits more
    num_classes = ids.size();
  }
  std::vector<std::uint32_t> first(num_classes + 1, byte_dfa::dead), rep(n);
  for (std::uint32_t s = 0; s < n; ++s) {
    if (first[cls[s]] == byte_dfa::dead) first[cls[s]] = s;
    rep[s] = first[cls[s]];
  }
  return rep;
}

std::uint32_t counted_representative(const byte_dfa& d, std::uint32_t s, std::size_t depth) {
  const std::uint64_t n = d.table_states();
  const std::uint64_t k = s / n, q = s % n, min = d.copies_min;
  const bool bounded = d.copies_max != byte_dfa::unbounded;
  // A string of at most `depth` bytes finishes at most `depth` copies (each takes a byte).
  if (k + depth < min) return static_cast<std::uint32_t>(q);  // never reaches min: as count 0
  if (k >= min && (!bounded || k + depth < d.copies_max)) {   // past min, never reaches max
    return static_cast<std::uint32_t>(min * n + q);
  }
  return s;
}

std::uint32_t mask_cache::representative(std::uint32_t element, std::uint32_t dfa_state) {
  const auto& el = grammar_->elements()[element];
  if (el.k != element::kind::terminal) return dfa_state;
  const byte_dfa& d = grammar_->dfas()[el.index];
  if (d.counted()) return counted_representative(d, dfa_state, vocab_->max_token_bytes());
  if (representatives_.empty()) representatives_.resize(grammar_->dfas().size());
  std::vector<std::uint32_t>& rep = representatives_[el.index];
  if (rep.empty()) rep = short_string_classes(d, vocab_->max_token_bytes());
  return dfa_state < rep.size() ? rep[dfa_state] : dfa_state;
}

std::shared_ptr<const mask_cache::entry> mask_cache::get(std::uint32_t element,
                                                        std::uint32_t dfa_state,
                                                        std::uint32_t return_to) {
  std::lock_guard<std::mutex> lock(mutex_);
  dfa_state = representative(element, dfa_state);
  const key k{element, dfa_state, return_to};
  if (auto it = entries_.find(k); it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.used);
    return it->second.e;
  }
  auto e = std::make_shared<const entry>(compute(element, dfa_state, return_to));
  const std::size_t b = bytes_of(*e);
  if (max_bytes_ > 0 && bytes_ + b > max_bytes_) {
    while (!lru_.empty() && bytes_ + b > max_bytes_) {
      auto last = entries_.find(lru_.back());
      bytes_ -= bytes_of(*last->second.e);
      entries_.erase(last);
      lru_.pop_back();
      ++dropped_;
    }
    scratch_ = std::make_unique<matcher>(grammar_);
    if (b > max_bytes_) return e;  // used once, never kept
  }
  lru_.push_front(k);
  entries_.emplace(k, slot{e, lru_.begin()});
  bytes_ += b;
  return e;
}

// A walk of the whole trie from the top frame and its caller's continuation alone.
// escaped_before[d]: the caller's rule could end after fewer than d bytes of the path (the stack
// below decides what follows). A token is accepted when some path takes all of it: staying in
// the two frames, ending the caller's rule exactly at its end, or completing the root there.
mask_cache::entry mask_cache::compute(std::uint32_t element, std::uint32_t dfa_state,
                                      std::uint32_t return_to) {
  const token_vocabulary& v = *vocab_;
  entry out;
  out.accepted.assign(bitmask_words(v.id_bound()), 0);
  matcher& m = *scratch_;
  std::vector<matcher::state> states(v.max_token_bytes() + 1);
  std::vector<char> escaped_before(v.max_token_bytes() + 2, 0);
  states[0] = m.single(m.out_of_context(element, dfa_state, return_to));
  const auto& nodes = v.nodes();
  const auto& ids = v.token_ids();
  auto add_ids = [&](const token_vocabulary::node& n, bool accepted) {
    for (std::uint32_t k = 0; k < n.num_ids; ++k) {
      if (accepted) {
        mask_set(out.accepted, ids[n.ids_begin + k]);
      } else {
        out.uncertain.push_back(ids[n.ids_begin + k]);
      }
    }
  };
  for (std::uint32_t i = 0; i < nodes.size();) {
    const token_vocabulary::node& n = nodes[i];
    const std::size_t d = n.depth;
    matcher::state& here = states[d];
    m.step(states[d - 1], n.byte, here);
    const bool alive = !here.stacks.empty();
    if (alive || here.escaped || here.complete) {
      add_ids(n, true);
    } else if (escaped_before[d]) {
      add_ids(n, false);
    }
    escaped_before[d + 1] = escaped_before[d] || here.escaped;
    if (!alive) {
      // Nothing inside the rule goes on: the subtree is uncertain if the rule ended on the
      // way, else rejected.
      if (escaped_before[d + 1]) {
        for (std::uint32_t j = i + 1; j < n.subtree_end; ++j) add_ids(nodes[j], false);
      }
      i = n.subtree_end;
      continue;
    }
    ++i;
  }
  return out;
}

void fill_token_mask(matcher& m, mask_cache& cache, token_bitmask& mask) {
  const token_vocabulary& v = cache.vocabulary();
  mask.assign(bitmask_words(v.id_bound()), 0);
  const matcher::state now = m.current();
  for (std::uint32_t top : now.stacks) {
    const matcher::frame f = m.frame_at(top);
    const std::uint32_t return_to =
        f.parent == matcher::no_parent ? matcher::no_parent : m.frame_at(f.parent).element;
    const std::shared_ptr<const mask_cache::entry> e = cache.get(f.element, f.dfa_state, return_to);
    for (std::size_t w = 0; w < mask.size(); ++w) mask[w] |= e->accepted[w];
    if (!e->uncertain.empty()) check_tokens(m, m.single(top), e->uncertain, v, mask);
  }
  if (now.complete) {
    for (std::uint32_t id : v.eos_ids()) {
      if (id < v.id_bound()) mask_set(mask, id);
    }
  }
}

void fill_token_mask_reference(matcher& m, const token_vocabulary& vocab, token_bitmask& mask) {
  mask.assign(bitmask_words(vocab.id_bound()), 0);
  const matcher::state now = m.current();
  matcher::state a, b;
  for (std::uint32_t id : vocab.token_ids()) {
    const std::string& bytes = vocab.bytes(id);
    a = now;
    bool ok = true;
    for (char c : bytes) {
      if (!m.step(a, static_cast<std::uint8_t>(c), b)) {
        ok = false;
        break;
      }
      std::swap(a, b);
    }
    if (ok) mask_set(mask, id);
  }
  if (now.complete) {
    for (std::uint32_t id : vocab.eos_ids()) {
      if (id < vocab.id_bound()) mask_set(mask, id);
    }
  }
}

}  // namespace courier::grammar
