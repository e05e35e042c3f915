// Thousands of random operations on a pool and a radix tree, each checked against a simple
// model of who holds which block. The model keeps the cache as a map from (namespace, block-
// aligned token prefix) to block id and LRU time: no tree, no nodes, no splitting. After every
// operation: both check_invariants(), every block's reference count equals its holders in the
// model (so no block is both free and referenced), and the counters agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cache/radix_tree.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_radix_tree_random {

using namespace courier::cache;

namespace {

constexpr std::size_t block_size = 2;
constexpr std::int32_t num_blocks = 40;
const std::vector<cache_namespace> namespaces = {{0, ""}, {1, ""}, {0, "tenant"}};

struct model_entry {
  block_id block;
  std::uint64_t last_used = 0;
};

struct sequence {
  std::size_t ns = 0;
  std::vector<token_id> tokens;
  std::size_t matched_tokens = 0;
  block_refs table;
  std::vector<block_id> expected_table;
};

struct held_match {
  prefix_match match;
  std::vector<block_id> expected;
};

using prefix_key = std::pair<std::size_t, std::vector<token_id>>;

struct harness {
  explicit harness(std::uint32_t seed) : rng(seed), tree(pool, block_size) {}

  std::mt19937 rng;
  block_pool pool{num_blocks};
  radix_tree tree;
  std::map<prefix_key, model_entry> cached;  // the model of the tree's content
  std::vector<sequence> sequences;
  std::vector<held_match> matches;
  std::vector<std::vector<token_id>> corpus;  // earlier token sequences, to share prefixes
  std::uint64_t clock = 0;
  prefix_cache_stats counters;

  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  }

  prefix_key key(std::size_t ns, const std::vector<token_id>& tokens, std::size_t blocks) const {
    return {ns, std::vector<token_id>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(
                                                                           blocks * block_size))};
  }

  // The model's match: the cached blocks of the longest cached prefix.
  std::vector<block_id> model_match(std::size_t ns, const std::vector<token_id>& tokens) const {
    std::vector<block_id> out;
    for (std::size_t k = 1; k <= tokens.size() / block_size; ++k) {
      const auto it = cached.find(key(ns, tokens, k));
      if (it == cached.end()) break;
      out.push_back(it->second.block);
    }
    return out;
  }

  void model_touch(std::size_t ns, const std::vector<token_id>& tokens, std::size_t blocks) {
    if (blocks == 0) return;
    ++clock;
    for (std::size_t k = 1; k <= blocks; ++k) cached.at(key(ns, tokens, k)).last_used = clock;
  }

  std::vector<token_id> random_tokens() {
    std::vector<token_id> tokens;
    if (!corpus.empty() && pick(4) != 0) {
      const std::vector<token_id>& base = corpus[pick(corpus.size())];
      tokens.assign(base.begin(),
                    base.begin() + static_cast<std::ptrdiff_t>(pick(base.size() + 1)));
    }
    const std::size_t extra = pick(3 * block_size + 1);
    for (std::size_t i = 0; i < extra; ++i) tokens.push_back(static_cast<token_id>(pick(3)));
    if (tokens.size() > 6 * block_size) tokens.resize(6 * block_size);
    return tokens;
  }

  // Holders in the model: the cache, each sequence's table entry, each held match's block.
  std::vector<std::int32_t> expected_ref_counts() const {
    std::vector<std::int32_t> counts(num_blocks, 0);
    for (const auto& [k, e] : cached) ++counts[static_cast<std::size_t>(e.block.value)];
    for (const sequence& s : sequences) {
      for (block_id b : s.expected_table) ++counts[static_cast<std::size_t>(b.value)];
    }
    for (const held_match& m : matches) {
      for (block_id b : m.expected) ++counts[static_cast<std::size_t>(b.value)];
    }
    return counts;
  }

  std::string mismatch() const {
    pool.check_invariants();
    tree.check_invariants();
    std::ostringstream out;
    const std::vector<std::int32_t> expected = expected_ref_counts();
    std::size_t expected_free = 0;
    for (std::int32_t b = 0; b < num_blocks; ++b) {
      const std::int32_t actual = pool.ref_count(block_id{b});
      if (actual != expected[static_cast<std::size_t>(b)]) {
        out << "block " << b << " has " << actual << " references, holders "
            << expected[static_cast<std::size_t>(b)] << "; ";
      }
      expected_free += expected[static_cast<std::size_t>(b)] == 0 ? 1 : 0;
    }
    if (pool.num_free() != expected_free) out << "free count " << pool.num_free() << "; ";
    for (const sequence& s : sequences) {
      if (s.table.ids() != s.expected_table) out << "a block table differs; ";
    }
    for (const held_match& m : matches) {
      if (m.match.blocks() != m.expected) out << "a held match differs; ";
    }
    const prefix_cache_stats s = tree.stats();
    if (s.num_blocks != cached.size()) out << "cached blocks " << s.num_blocks << "; ";
    if (s.num_hits != counters.num_hits || s.num_misses != counters.num_misses ||
        s.num_hit_tokens != counters.num_hit_tokens ||
        s.num_query_tokens != counters.num_query_tokens) {
      out << "counters differ; ";
    }
    return out.str();
  }

  void start_sequence() {
    const std::size_t ns = pick(namespaces.size());
    std::vector<token_id> tokens = random_tokens();
    const bool pin = pick(4) == 0;
    const bool keep_match = pin || pick(6) == 0;
    const std::vector<block_id> expected = model_match(ns, tokens);
    prefix_match m =
        pin ? tree.pin_prefix(namespaces[ns], tokens) : tree.lookup(namespaces[ns], tokens);
    REQUIRE(m.blocks() == expected);
    REQUIRE(m.num_tokens() == expected.size() * block_size);
    model_touch(ns, tokens, expected.size());
    if (!pin) {
      ++(expected.empty() ? counters.num_misses : counters.num_hits);
      counters.num_hit_tokens += expected.size() * block_size;
      counters.num_query_tokens += tokens.size();
    }
    matches.push_back({std::move(m), expected});  // held while we evict and allocate
    if (keep_match) return;
    const std::size_t need = (tokens.size() + block_size - 1) / block_size - expected.size();
    if (need > pool.num_free() && pick(2) == 0) evict(need - pool.num_free());
    m = std::move(matches.back().match);
    matches.pop_back();
    std::optional<block_refs> fresh = block_refs::allocate(pool, need);
    if (!fresh) {  // does not fit: roll the lookup back
      tree.release_matched(std::move(m));
      --(expected.empty() ? counters.num_misses : counters.num_hits);
      counters.num_hit_tokens -= expected.size() * block_size;
      counters.num_query_tokens -= tokens.size();
      return;
    }
    sequence s;
    s.ns = ns;
    s.matched_tokens = m.num_tokens();
    s.table = m.take_blocks();
    s.table.append(std::move(*fresh));
    s.expected_table = s.table.ids();  // the first entries were checked above; the rest are new
    s.tokens = std::move(tokens);
    corpus.push_back(s.tokens);
    sequences.push_back(std::move(s));
  }

  void grow_and_insert() {
    sequence& s = sequences[pick(sequences.size())];
    std::vector<token_id> grown = s.tokens;
    for (std::size_t i = pick(2 * block_size + 1); i > 0; --i) {
      grown.push_back(static_cast<token_id>(pick(3)));
    }
    const std::size_t need = (grown.size() + block_size - 1) / block_size;
    if (need > s.table.size()) {
      std::optional<block_refs> more = block_refs::allocate(pool, need - s.table.size());
      if (!more) return;  // does not fit: the sequence stays as it was
      s.table.append(std::move(*more));
      s.expected_table = s.table.ids();
    }
    s.tokens = std::move(grown);
    corpus.push_back(s.tokens);
    // Model: the longest cached prefix is followed, the rest is stored.
    const std::vector<block_id> existing = model_match(s.ns, s.tokens);
    const std::size_t num_full = s.tokens.size() / block_size;
    std::vector<block_id> stored;
    std::vector<block_follow> followed;
    for (std::size_t i = 0; i < num_full; ++i) {
      if (i < existing.size()) {
        if (existing[i] != s.expected_table[i])
          followed.push_back({i, s.expected_table[i], existing[i]});
        s.expected_table[i] = existing[i];
      } else {
        stored.push_back(s.expected_table[i]);
        cached[key(s.ns, s.tokens, i + 1)] = {s.expected_table[i], 0};
      }
    }
    model_touch(s.ns, s.tokens, num_full);
    const insert_result r = tree.insert(namespaces[s.ns], s.tokens, s.table, s.matched_tokens);
    REQUIRE(r.stored == stored);
    REQUIRE(r.followed.size() == followed.size());
    for (std::size_t i = 0; i < followed.size(); ++i) {
      REQUIRE(r.followed[i].index == followed[i].index);
      REQUIRE(r.followed[i].dropped == followed[i].dropped);
      REQUIRE(r.followed[i].kept == followed[i].kept);
    }
  }

  void fork() {  // a second sequence sharing another's full blocks (n > 1 sampling)
    const sequence& s = sequences[pick(sequences.size())];
    const std::size_t num_full = s.tokens.size() / block_size;
    sequence f;
    f.ns = s.ns;
    f.tokens.assign(s.tokens.begin(),
                    s.tokens.begin() + static_cast<std::ptrdiff_t>(num_full * block_size));
    f.matched_tokens = s.matched_tokens;
    f.expected_table.assign(s.expected_table.begin(),
                            s.expected_table.begin() + static_cast<std::ptrdiff_t>(num_full));
    f.table = block_refs::share(pool, f.expected_table);
    sequences.push_back(std::move(f));
  }

  void evict(std::size_t n) {
    // Model: repeatedly the least recently used cached prefix that no cached prefix extends
    // and that only the cache holds.
    std::vector<std::int32_t> holders = expected_ref_counts();
    const std::vector<block_id> evicted = tree.evict(n);
    std::size_t done = 0;
    while (done < n) {
      std::vector<prefix_key> candidates;
      std::uint64_t oldest = ~std::uint64_t{0};
      for (const auto& [key, e] : cached) {
        const prefix_key& k = key;  // a lambda cannot capture a structured binding in C++17
        const bool leaf = std::none_of(cached.begin(), cached.end(), [&](const auto& other) {
          return other.first.first == k.first &&
                 other.first.second.size() == k.second.size() + block_size &&
                 std::equal(k.second.begin(), k.second.end(), other.first.second.begin());
        });
        if (!leaf || holders[static_cast<std::size_t>(e.block.value)] != 1) continue;
        if (e.last_used < oldest) candidates.clear(), oldest = e.last_used;
        if (e.last_used == oldest) candidates.push_back(k);
      }
      if (candidates.empty()) break;
      REQUIRE(done < evicted.size());
      const auto chosen =
          std::find_if(candidates.begin(), candidates.end(),
                       [&](const prefix_key& k) { return cached.at(k).block == evicted[done]; });
      REQUIRE(chosen != candidates.end());
      holders[static_cast<std::size_t>(evicted[done].value)] = 0;
      cached.erase(*chosen);
      ++done;
    }
    REQUIRE(evicted.size() == done);
  }

  void release_sequence() {
    const std::size_t i = pick(sequences.size());
    tree.release(std::move(sequences[i].table));
    sequences.erase(sequences.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void release_match() {
    const std::size_t i = pick(matches.size());
    held_match& m = matches[i];
    if (m.match.from() == prefix_match::origin::lookup) {
      --(m.expected.empty() ? counters.num_misses : counters.num_hits);
      counters.num_hit_tokens -= m.match.num_tokens();
      counters.num_query_tokens -= m.match.num_query_tokens();
    }
    tree.release_matched(std::move(m.match));
    matches.erase(matches.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void peek() {
    const std::size_t ns = pick(namespaces.size());
    const std::vector<token_id> tokens = random_tokens();
    REQUIRE(tree.peek_matched_tokens(namespaces[ns], tokens) ==
            model_match(ns, tokens).size() * block_size);
  }

  void step() {
    switch (pick(10)) {
      case 0:
      case 1:
      case 2:
        start_sequence();
        break;
      case 3:
      case 4:
        if (!sequences.empty()) grow_and_insert();
        break;
      case 5:
        if (!sequences.empty()) release_sequence();
        break;
      case 6:
        if (!matches.empty()) release_match();
        break;
      case 7:
        evict(pick(6));
        break;
      case 8:
        if (!sequences.empty() && pick(3) == 0)
          fork();
        else
          peek();
        break;
      default:
        REQUIRE_FALSE(block_refs::allocate(pool, pool.num_free() + 1 + pick(3)));
        break;
    }
  }
};

}  // namespace

TEST_CASE("radix tree: random operations keep every reference count equal to its holders",
          "[cache]") {
  const std::uint32_t seed = GENERATE(range(1u, 13u));
  INFO("seed " << seed);
  harness h(seed);
  for (int op = 0; op < 3000; ++op) {
    INFO("operation " << op);
    h.step();
    REQUIRE(h.mismatch() == "");
  }
  // Everyone lets go; then everything can be evicted and the pool is full again.
  while (!h.sequences.empty()) h.release_sequence();
  while (!h.matches.empty()) h.release_match();
  REQUIRE(h.mismatch() == "");
  h.evict(num_blocks);
  REQUIRE(h.mismatch() == "");
  CHECK(h.pool.num_free() == static_cast<std::size_t>(num_blocks));
  CHECK(h.tree.stats().num_blocks == 0);
  CHECK(h.tree.stats().num_namespaces == 0);
}

}  // namespace courier_test_cache_radix_tree_random
