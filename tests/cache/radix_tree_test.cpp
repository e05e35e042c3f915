// The radix prefix cache, case by case. Block size 2 throughout; every expected block id and
// count below is worked out by hand from the pool's lowest-id-first allocation.
#include "cache/radix_tree.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <utility>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_radix_tree {

using namespace courier::cache;

namespace {

const cache_namespace base_model{};

std::vector<block_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<block_id> out;
  for (std::int32_t v : values) out.push_back(block_id{v});
  return out;
}

block_refs allocate(block_pool& pool, std::size_t n) {
  auto refs = block_refs::allocate(pool, n);
  REQUIRE(refs);
  return std::move(*refs);
}

// A sequence that computed `tokens` into fresh blocks, then finished: insert, release.
void store(radix_tree& tree, block_pool& pool, const cache_namespace& ns,
           const std::vector<token_id>& tokens) {
  block_refs table = allocate(pool, tokens.size() / tree.block_size());
  (void)tree.insert(ns, tokens, table, 0);
  tree.release(std::move(table));
}

void check(const block_pool& pool, const radix_tree& tree) {
  pool.check_invariants();
  tree.check_invariants();
}

}  // namespace

TEST_CASE("radix tree: an empty tree matches nothing and counts a miss", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  CHECK(tree.is_active());
  prefix_match m = tree.lookup(base_model, std::vector<token_id>{1, 2, 3});
  CHECK(m.num_tokens() == 0);
  CHECK(m.blocks().empty());
  CHECK(tree.stats().num_misses == 1);
  CHECK(tree.stats().num_hits == 0);
  check(pool, tree);
}

TEST_CASE("radix tree: lookup matches whole blocks and takes a reference on each", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4, 5, 6});  // blocks 0, 1, 2
  prefix_match m = tree.lookup(base_model, std::vector<token_id>{1, 2, 3, 4, 5});
  CHECK(m.num_tokens() == 4);
  CHECK(m.blocks() == ids({0, 1}));
  CHECK(pool.ref_count(block_id{0}) == 2);
  CHECK(pool.ref_count(block_id{1}) == 2);
  CHECK(pool.ref_count(block_id{2}) == 1);
  check(pool, tree);
  tree.release_matched(std::move(m));
  CHECK(pool.ref_count(block_id{0}) == 1);
  CHECK(pool.ref_count(block_id{1}) == 1);
  check(pool, tree);
}

TEST_CASE("radix tree: a mismatch inside a block ends the match before that block", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{1, 2, 3, 9}) == 2);
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{1, 9, 3, 4}) == 0);
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{1, 2, 3, 4}) == 4);
}

TEST_CASE("radix tree: peek takes no reference, touches no LRU time and counts nothing",
          "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2});  // block 0, used first
  store(tree, pool, base_model, {3, 4});  // block 1
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{1, 2}) == 2);
  CHECK(pool.ref_count(block_id{0}) == 1);
  const prefix_cache_stats s = tree.stats();
  CHECK(s.num_hits + s.num_misses + s.num_query_tokens == 0);
  CHECK(tree.evict(1) == ids({0}));  // still the least recently used
  check(pool, tree);
}

TEST_CASE(
    "radix tree: insert keeps the node's block when the sequence had another, and the "
    "caller's references follow it",
    "[cache]") {
  block_pool pool(8);
  radix_tree tree(pool, 2);
  const std::vector<token_id> prompt = {1, 2, 3, 4};
  // Two sequences computed the same prompt at the same time; neither found it cached.
  block_refs first = allocate(pool, 2);   // blocks 0, 1
  block_refs second = allocate(pool, 2);  // blocks 2, 3
  const insert_result a = tree.insert(base_model, prompt, first, 0);
  CHECK(a.stored == ids({0, 1}));
  CHECK(a.followed.empty());
  const insert_result b = tree.insert(base_model, prompt, second, 0);
  CHECK(b.stored.empty());
  REQUIRE(b.followed.size() == 2);
  CHECK(b.followed[0].index == 0);
  CHECK(b.followed[0].dropped == block_id{2});
  CHECK(b.followed[0].kept == block_id{0});
  CHECK(b.followed[1].index == 1);
  CHECK(b.followed[1].dropped == block_id{3});
  CHECK(b.followed[1].kept == block_id{1});
  // The second sequence's table is now the tree's blocks; its own were freed.
  CHECK(second.ids() == ids({0, 1}));
  CHECK(pool.ref_count(block_id{0}) == 3);  // tree, first, second
  CHECK(pool.ref_count(block_id{1}) == 3);
  CHECK(pool.is_free(block_id{2}));
  CHECK(pool.is_free(block_id{3}));
  CHECK(pool.num_free() == 6);
  check(pool, tree);
  tree.release(std::move(first));
  tree.release(std::move(second));
  CHECK(pool.ref_count(block_id{0}) == 1);
  CHECK(tree.evict(8) == ids({1, 0}));
  CHECK(pool.num_free() == 8);
  check(pool, tree);
}

TEST_CASE(
    "radix tree: release_matched after a longer insert by someone else releases exactly "
    "what lookup took",
    "[cache]") {
  block_pool pool(8);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});  // blocks 0, 1
  const std::vector<token_id> longer = {1, 2, 3, 4, 5, 6, 7, 8};
  prefix_match waiting = tree.lookup(base_model, longer);  // matches 0, 1
  REQUIRE(waiting.blocks() == ids({0, 1}));
  // Someone else computes the longer prompt and stores it: the tree now matches 4 blocks.
  prefix_match other = tree.lookup(base_model, longer);
  block_refs table = other.take_blocks();
  table.append(allocate(pool, 2));  // blocks 2, 3
  const insert_result r = tree.insert(base_model, longer, table, other.num_tokens());
  CHECK(r.stored == ids({2, 3}));
  tree.release(std::move(table));
  CHECK(tree.peek_matched_tokens(base_model, longer) == 8);
  CHECK(pool.ref_count(block_id{0}) == 2);  // tree, waiting
  CHECK(pool.ref_count(block_id{2}) == 1);  // tree
  tree.release_matched(std::move(waiting));
  for (std::int32_t b = 0; b < 4; ++b) CHECK(pool.ref_count(block_id{b}) == 1);
  CHECK(pool.num_free() == 4);
  check(pool, tree);
}

TEST_CASE("radix tree: insert stores only full blocks", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  block_refs table = allocate(pool, 2);  // blocks 0, 1; block 1 half full
  const insert_result r = tree.insert(base_model, std::vector<token_id>{1, 2, 3}, table, 0);
  CHECK(r.stored == ids({0}));
  CHECK(tree.stats().num_blocks == 1);
  CHECK(pool.ref_count(block_id{1}) == 1);
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{1, 2, 3, 4}) == 2);
  check(pool, tree);
}

TEST_CASE("radix tree: inserting the same sequence twice stores its blocks once", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  const std::vector<token_id> tokens = {1, 2, 3, 4};
  block_refs table = allocate(pool, 2);
  (void)tree.insert(base_model, tokens, table, 0);
  const insert_result again = tree.insert(base_model, tokens, table, 0);
  CHECK(again.stored.empty());
  CHECK(again.followed.empty());
  CHECK(pool.ref_count(block_id{0}) == 2);
  CHECK(tree.stats().num_blocks == 2);
  check(pool, tree);
}

TEST_CASE("radix tree: insert rejects a table that contradicts the tree, and changes nothing",
          "[cache]") {
  block_pool pool(6);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2});  // block 0
  block_refs table = allocate(pool, 2);   // blocks 1, 2
  const std::vector<token_id> tokens = {1, 2, 3, 4};
  // Claims its first block came from the lookup, but block 1 is not the tree's.
  CHECK_THROWS_AS(tree.insert(base_model, tokens, table, 2), std::invalid_argument);
  CHECK_THROWS_AS(tree.insert(base_model, tokens, table, 3), std::invalid_argument);
  block_refs shared = block_refs::share(pool, ids({0, 0}));
  // Block 0 already holds tokens {1, 2}; it cannot also be stored for {5, 6}.
  CHECK_THROWS_AS(tree.insert(base_model, std::vector<token_id>{5, 6, 7, 8}, shared, 0),
                  std::invalid_argument);
  CHECK(tree.stats().num_blocks == 1);
  CHECK(pool.ref_count(block_id{0}) == 3);
  CHECK(pool.ref_count(block_id{1}) == 1);
  check(pool, tree);
}

TEST_CASE("radix tree: evict frees the least recently used leaves first, then their parents",
          "[cache]") {
  block_pool pool(8);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});  // blocks 0, 1
  store(tree, pool, base_model, {5, 6});        // block 2
  store(tree, pool, base_model, {1, 2, 7, 8});  // reuses 0; block 3 followed and freed; 4 new
  CHECK(pool.num_free() == 4);
  // Leaves by age: {3,4} (block 1), {5,6} (block 2), {7,8} (block 4); then {1,2} (block 0).
  CHECK(tree.evict(2) == ids({1, 2}));
  CHECK(tree.peek_matched_tokens(base_model, std::vector<token_id>{5, 6}) == 0);
  check(pool, tree);
  CHECK(tree.evict(5) == ids({4, 0}));
  CHECK(pool.num_free() == 8);
  CHECK(tree.stats().num_namespaces == 0);
  CHECK(tree.stats().num_evicted_blocks == 4);
  check(pool, tree);
}

TEST_CASE("radix tree: evict never frees a block that a sequence or a match holds", "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});  // blocks 0, 1
  prefix_match whole = tree.pin_prefix(base_model, std::vector<token_id>{1, 2, 3, 4});
  CHECK(tree.evict(4).empty());
  tree.release_matched(std::move(whole));
  prefix_match head = tree.pin_prefix(base_model, std::vector<token_id>{1, 2});
  CHECK(tree.evict(4) == ids({1}));
  CHECK(pool.ref_count(block_id{0}) == 2);
  check(pool, tree);
  tree.release_matched(std::move(head));
  CHECK(tree.evict(4) == ids({0}));
  check(pool, tree);
}

TEST_CASE("radix tree: a match that ends inside a node leaves the rest with its older LRU time",
          "[cache]") {
  block_pool pool(4);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});  // blocks 0, 1
  store(tree, pool, base_model, {5, 6});        // block 2, newer
  tree.release_matched(tree.pin_prefix(base_model, std::vector<token_id>{1, 2}));
  // {1,2} is now the newest, but {3,4} was not used since it was stored.
  CHECK(tree.evict(1) == ids({1}));
  CHECK(tree.evict(1) == ids({2}));
  check(pool, tree);
}

TEST_CASE("radix tree: a lookup under another adapter or isolation key never matches", "[cache]") {
  block_pool pool(8);
  radix_tree tree(pool, 2);
  const cache_namespace team_a{0, "team-a"};
  const cache_namespace team_b{0, "team-b"};
  const cache_namespace adapter_a{1, "team-a"};
  const std::vector<token_id> prompt = {1, 2, 3, 4};
  store(tree, pool, team_a, prompt);  // blocks 0, 1
  CHECK(tree.lookup(team_b, prompt).num_tokens() == 0);
  CHECK(tree.lookup(adapter_a, prompt).num_tokens() == 0);
  CHECK(tree.lookup(base_model, prompt).num_tokens() == 0);
  CHECK(tree.peek_matched_tokens(team_b, prompt) == 0);
  // The same tokens under team-b keep team-b's own blocks: nothing is followed across.
  block_refs table = allocate(pool, 2);  // blocks 2, 3
  const insert_result r = tree.insert(team_b, prompt, table, 0);
  CHECK(r.stored == ids({2, 3}));
  CHECK(r.followed.empty());
  tree.release(std::move(table));
  prefix_match a = tree.lookup(team_a, prompt);
  prefix_match b = tree.lookup(team_b, prompt);
  CHECK(a.blocks() == ids({0, 1}));
  CHECK(b.blocks() == ids({2, 3}));
  CHECK(tree.stats().num_namespaces == 2);
  tree.release_matched(std::move(a));
  tree.release_matched(std::move(b));
  CHECK(tree.evict(8).size() == 4);
  CHECK(tree.stats().num_namespaces == 0);
  check(pool, tree);
}

TEST_CASE(
    "radix tree: counters count reused blocks once, and a lookup released unused not at "
    "all",
    "[cache]") {
  block_pool pool(8);
  radix_tree tree(pool, 2);
  store(tree, pool, base_model, {1, 2, 3, 4});
  prefix_match used = tree.lookup(base_model, std::vector<token_id>{1, 2, 3, 4, 5});  // hit, 4
  block_refs table = used.take_blocks();
  tree.release_matched(std::move(used));  // taken: stays counted
  prefix_match missed = tree.lookup(base_model, std::vector<token_id>{9, 9});  // miss
  block_refs nothing = missed.take_blocks();
  prefix_match rolled_back = tree.lookup(base_model, std::vector<token_id>{1, 2, 9});
  tree.release_matched(std::move(rolled_back));  // not taken: uncounted
  tree.release_matched(tree.pin_prefix(base_model, std::vector<token_id>{1, 2, 3, 4}));
  const prefix_cache_stats s = tree.stats();
  CHECK(s.num_hits == 1);
  CHECK(s.num_misses == 1);
  CHECK(s.num_hit_tokens == 4);
  CHECK(s.num_query_tokens == 7);
  CHECK(pool.ref_count(block_id{0}) == 2);  // tree and `table`
}

TEST_CASE("radix tree: destroying the tree drops its references", "[cache]") {
  block_pool pool(6);
  {
    radix_tree tree(pool, 2);
    store(tree, pool, base_model, {1, 2, 3, 4});
    store(tree, pool, base_model, {1, 2, 5, 6});
    CHECK(pool.num_free() < 6);
  }
  CHECK(pool.num_free() == 6);
  pool.check_invariants();
}

}  // namespace courier_test_cache_radix_tree
