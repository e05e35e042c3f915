#include "text/tokenizer/bpe_merge.hpp"

#include <queue>

namespace courier::text {

namespace {

// Below this many symbols the scan beats the heap.
constexpr std::size_t scan_limit = 48;

}  // namespace

void merge_table::reserve(std::size_t num_rules) {
  std::size_t capacity = 16;
  while (capacity < num_rules + num_rules / 2) capacity *= 2;
  if (capacity <= slots_.size()) return;
  std::vector<slot> old;
  old.swap(slots_);
  slots_.assign(capacity, slot{});
  mask_ = capacity - 1;
  shift_ = 64;
  for (std::size_t c = capacity; c > 1; c /= 2) --shift_;
  size_ = 0;
  for (const slot& s : old) {
    if (s.key != empty)
      insert(static_cast<std::uint32_t>(s.key >> 32), static_cast<std::uint32_t>(s.key), s.value);
  }
}

void merge_table::grow() {
  reserve(slots_.empty() ? 16 : slots_.size());
}

void merge_table::insert(std::uint32_t left, std::uint32_t right, rule r) {
  if ((size_ + 1) * 3 > slots_.size() * 2) grow();  // keep the load under 2/3
  const std::uint64_t key = pack(left, right);
  for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
    slot& s = slots_[i];
    if (s.key == key) {
      s.value = r;
      return;
    }
    if (s.key == empty) {
      s.key = key;
      s.value = r;
      ++size_;
      return;
    }
  }
}

void bpe_merge_scan(std::vector<std::uint32_t>& symbols, const merge_table& merges) {
  const std::size_t n = symbols.size();
  if (n < 2) return;
  // rules[i] is the rule for the pair (symbols[i], symbols[i + 1]).
  thread_local std::vector<merge_table::rule> rules;
  rules.resize(n - 1);
  for (std::size_t i = 0; i + 1 < n; ++i) rules[i] = merges.find(symbols[i], symbols[i + 1]);
  std::size_t count = n;
  for (;;) {
    std::size_t best = 0;
    std::uint32_t best_rank = merge_table::no_rank;
    for (std::size_t i = 0; i + 1 < count; ++i) {
      if (rules[i].rank < best_rank) {
        best_rank = rules[i].rank;
        best = i;
      }
    }
    if (best_rank == merge_table::no_rank) break;
    symbols[best] = rules[best].merged_id;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(best));
    --count;
    if (best > 0) rules[best - 1] = merges.find(symbols[best - 1], symbols[best]);
    if (best + 1 < count) rules[best] = merges.find(symbols[best], symbols[best + 1]);
  }
}

void bpe_merge_heap(std::vector<std::uint32_t>& symbols, const merge_table& merges) {
  const std::size_t n = symbols.size();
  if (n < 2) return;
  // A doubly linked list over the original positions; a merged-away symbol is marked dead.
  // Heap entries are validated lazily, exactly as Hugging Face's Word::merge_all does: an entry
  // applies only while its position is alive, has a right neighbour, and that pair still
  // merges into the entry's id.
  struct candidate {
    std::uint32_t rank;
    std::uint32_t pos;
    std::uint32_t merged_id;
    bool operator>(const candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  constexpr std::uint32_t none = 0xFFFFFFFFu;
  std::vector<std::uint32_t> prev(n), next(n);
  std::vector<char> alive(n, 1);
  std::priority_queue<candidate, std::vector<candidate>, std::greater<candidate>> heap;
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? none : static_cast<std::uint32_t>(i - 1);
    next[i] = i + 1 == n ? none : static_cast<std::uint32_t>(i + 1);
    if (i + 1 < n) {
      const auto r = merges.find(symbols[i], symbols[i + 1]);
      if (r.rank != merge_table::no_rank) {
        heap.push({r.rank, static_cast<std::uint32_t>(i), r.merged_id});
      }
    }
  }
  while (!heap.empty()) {
    const candidate top = heap.top();
    heap.pop();
    if (!alive[top.pos] || next[top.pos] == none) continue;
    const std::uint32_t right = next[top.pos];
    const auto current = merges.find(symbols[top.pos], symbols[right]);
    if (current.rank == merge_table::no_rank || current.merged_id != top.merged_id) continue;
    symbols[top.pos] = top.merged_id;
    alive[right] = 0;
    next[top.pos] = next[right];
    if (next[right] != none) prev[next[right]] = top.pos;
    if (prev[top.pos] != none) {
      const auto r = merges.find(symbols[prev[top.pos]], symbols[top.pos]);
      if (r.rank != merge_table::no_rank) heap.push({r.rank, prev[top.pos], r.merged_id});
    }
    if (next[top.pos] != none) {
      const auto r = merges.find(symbols[top.pos], symbols[next[top.pos]]);
      if (r.rank != merge_table::no_rank) heap.push({r.rank, top.pos, r.merged_id});
    }
  }
  std::size_t out = 0;
  for (std::uint32_t i = 0; i != none; i = next[i]) symbols[out++] = symbols[i];
  symbols.resize(out);
}

void bpe_merge(std::vector<std::uint32_t>& symbols, const merge_table& merges) {
  if (symbols.size() <= scan_limit) {
    bpe_merge_scan(symbols, merges);
  } else {
    bpe_merge_heap(symbols, merges);
  }
}

}  // namespace courier::text
