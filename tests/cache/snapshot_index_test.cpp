// snapshot_index: rows, entries keyed by a stored prefix's last block, pins; and, over thousands
// of random operations beside a radix tree, the ownership model: every block's count is the
// tree's reference plus one per snapshot on it, and a snapshot's whole prefix stays stored
// (the tree never evicts a held block nor any block before it on its path).
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <vector>

#include "cache/radix_tree.hpp"
#include "cache/snapshot_index.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_snapshot_index {

using namespace courier::cache;

namespace {

constexpr std::size_t bs = 2;
const cache_namespace ns{0, ""};

// Stores `tokens` (whole blocks) in the tree and returns the tree's blocks for them.
std::vector<block_id> store(block_pool& pool, radix_tree& tree, const std::vector<token_id>& t) {
  const std::size_t n = t.size() / bs;
  prefix_match m = tree.lookup(ns, t);
  const std::size_t have = m.blocks().size();
  block_refs table = m.take_blocks();
  auto fresh = block_refs::allocate(pool, n - have);
  REQUIRE(fresh);
  table.append(std::move(*fresh));
  (void)tree.insert(ns, t, table, have * bs);
  std::vector<block_id> ids = table.ids();
  tree.release(std::move(table));
  return ids;
}

}  // namespace

TEST_CASE("snapshot index: rows are taken and given back, a block has one snapshot, a pinned "
          "one cannot be erased, and the deepest along a path is found",
          "[cache]") {
  block_pool pool(16);
  radix_tree tree(pool, bs);
  snapshot_index snaps(pool, 5, 2);  // rows 5 and 6
  const std::vector<block_id> path = store(pool, tree, {1, 2, 3, 4, 5, 6});
  CHECK(snaps.deepest(path) == -1);
  const std::int32_t r1 = *snaps.take_slot(), r2 = *snaps.take_slot();
  CHECK(((r1 == 5 && r2 == 6) || (r1 == 6 && r2 == 5)));
  CHECK_FALSE(snaps.take_slot());
  CHECK(snaps.insert(path[0], 2, r1, snapshot_kind::intermediate, 1));
  CHECK(pool.ref_count(path[0]) == 2);  // the tree's and the snapshot's
  CHECK_FALSE(snaps.insert(path[0], 2, r2, snapshot_kind::exact, 2));  // one per block
  CHECK(snaps.num_free_slots() == 1);                                   // r2 went back
  CHECK(snaps.deepest(path) == 0);
  const std::int32_t r3 = *snaps.take_slot();
  CHECK(snaps.insert(path[2], 6, r3, snapshot_kind::exact, 3));
  CHECK(snaps.deepest(path) == 2);
  CHECK(snaps.deepest({path[0], path[1]}) == 0);
  snaps.pin(path[2]);
  CHECK_THROWS_AS(snaps.erase(path[2]), std::logic_error);
  snaps.unpin(path[2]);
  CHECK_THROWS_AS(snaps.unpin(path[2]), std::logic_error);
  // Held: the tree evicts nothing on the path (the last block pins every block before it).
  CHECK(tree.evict(16).empty());
  snaps.erase(path[2]);
  CHECK(tree.evict(16).size() == 2);  // the blocks past the remaining snapshot, not its own
  CHECK(snaps.find(path[0])->slot == r1);
  snaps.check_invariants();
  tree.check_invariants();
  CHECK_THROWS_AS(snaps.give_back(99), std::logic_error);  // not a snapshot row
}

TEST_CASE("snapshot index: a spilled snapshot keeps its key and its prefix, gives its row back, "
          "and is promoted into a new row",
          "[cache]") {
  block_pool pool(16);
  radix_tree tree(pool, bs);
  snapshot_index snaps(pool, 3, 1, 1);  // one device row (3), one host row (0)
  const std::vector<block_id> path = store(pool, tree, {1, 2, 3, 4});
  const std::int32_t row = *snaps.take_slot();
  REQUIRE(snaps.insert(path[1], 4, row, snapshot_kind::tail, 1));
  CHECK_FALSE(snaps.take_slot());
  snaps.pin(path[1]);
  CHECK_THROWS_AS(snaps.spill(path[1]), std::logic_error);  // being restored
  snaps.unpin(path[1]);
  CHECK(snaps.spill(path[1]) == 0);
  CHECK(snaps.find(path[1])->slot == -1);
  CHECK(snaps.find(path[1])->host_slot == 0);
  CHECK(snaps.num_free_slots() == 1);  // its row is free
  CHECK(snaps.num_free_host_slots() == 0);
  CHECK(snaps.deepest(path) == 1);     // still found
  CHECK(pool.ref_count(path[1]) == 2);  // and still holding its prefix
  CHECK(tree.evict(16).empty());
  snaps.check_invariants();
  const std::int32_t again = *snaps.take_slot();
  CHECK(snaps.promote(path[1], again) == 0);
  CHECK(snaps.find(path[1])->slot == again);
  CHECK(snaps.num_free_host_slots() == 1);
  CHECK_THROWS_AS(snaps.promote(path[1], again), std::logic_error);  // already on the device
  CHECK(snaps.spill(path[1]) == 0);
  snaps.erase(path[1]);  // a spilled one gives its host row back
  CHECK(snaps.num_free_host_slots() == 1);
  CHECK(snaps.num_free_slots() == 1);
  snaps.check_invariants();
}

TEST_CASE("snapshot index: a host row lent out is neither free nor spilled until given back",
          "[cache]") {
  block_pool pool(16);
  radix_tree tree(pool, bs);
  snapshot_index snaps(pool, 3, 1, 2);  // one device row (3), two host rows
  const std::vector<block_id> path = store(pool, tree, {1, 2, 3, 4});
  const std::optional<std::int32_t> lent = snaps.take_host();
  REQUIRE(lent);
  CHECK(snaps.num_lent_host() == 1);
  CHECK(snaps.num_free_host_slots() == 1);
  CHECK(snaps.num_spilled() == 0);
  snaps.check_invariants();
  REQUIRE(snaps.insert(path[1], 4, *snaps.take_slot(), snapshot_kind::exact, 1));
  const std::optional<std::int32_t> spilled = snaps.spill(path[1]);  // into the other row
  REQUIRE(spilled);
  CHECK(*spilled != *lent);
  CHECK(snaps.num_spilled() == 1);
  CHECK_FALSE(snaps.take_host());  // none free
  snaps.check_invariants();
  snaps.give_back_host(*lent);
  CHECK_THROWS_AS(snaps.give_back_host(*lent), std::logic_error);  // not lent any more
  CHECK(snaps.num_lent_host() == 0);
  CHECK(snaps.num_free_host_slots() == 1);
  snaps.check_invariants();
}

TEST_CASE("snapshot index: random operations keep every count and every snapshot's prefix",
          "[cache]") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    block_pool pool(48);
    radix_tree tree(pool, bs);
    snapshot_index snaps(pool, 100, 5, 3);
    std::map<block_id, std::vector<token_id>> prefix_of;  // each snapshot's tokens
    std::vector<std::vector<token_id>> corpus;
    for (int op = 0; op < 400; ++op) {
      const unsigned what = rng() % 10;
      if (what < 4) {  // store a sequence sharing a prefix with an earlier one
        std::vector<token_id> t;
        if (!corpus.empty() && rng() % 2) {
          const auto& base = corpus[rng() % corpus.size()];
          t.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(rng() % (base.size() + 1)));
        }
        const std::size_t len = (t.size() / bs + 1 + rng() % 5) * bs;
        while (t.size() < len) t.push_back(rng() % 3);
        t.resize(len);
        (void)tree.evict(len / bs);  // room, as the scheduler makes it
        if (pool.num_free() < len / bs) continue;
        store(pool, tree, t);
        corpus.push_back(t);
      } else if (what < 7 && !corpus.empty()) {  // snapshot a stored prefix
        const auto& t = corpus[rng() % corpus.size()];
        prefix_match m = tree.pin_prefix(ns, t);
        if (m.blocks().empty()) {
          tree.release_matched(std::move(m));
          continue;
        }
        const std::size_t i = rng() % m.blocks().size();
        const block_id b = m.blocks()[i];
        if (auto slot = snaps.take_slot()) {
          if (snaps.insert(b, static_cast<std::int32_t>((i + 1) * bs), *slot,
                           snapshot_kind::exact, static_cast<std::uint64_t>(op))) {
            prefix_of[b] = std::vector<token_id>(t.begin(), t.begin() + static_cast<std::ptrdiff_t>((i + 1) * bs));
          }
        }
        tree.release_matched(std::move(m));
      } else if (what == 7 && snaps.size() > 0 && rng() % 2) {  // spill or promote one
        const std::vector<const snapshot_entry*> all = snaps.entries();
        const snapshot_entry& e = *all[rng() % all.size()];
        if (e.slot >= 0) {
          (void)snaps.spill(e.block);  // nothing when the host tier is full
        } else if (auto row = snaps.take_slot()) {
          CHECK(snaps.promote(e.block, *row) >= 0);
        }
      } else if (what < 8 && snaps.size() > 0) {  // erase one (pinning it around first)
        const std::vector<const snapshot_entry*> all = snaps.entries();
        const block_id b = all[rng() % all.size()]->block;
        snaps.pin(b);
        CHECK_THROWS_AS(snaps.erase(b), std::logic_error);
        snaps.unpin(b);
        snaps.erase(b);
        prefix_of.erase(b);
      } else {
        (void)tree.evict(1 + rng() % 6);
      }
      snaps.check_invariants();
      tree.check_invariants();
      pool.check_invariants();
      for (std::int32_t id = 0; id < 48; ++id) {
        const block_id b{id};
        const int want = (tree.stores(b) ? 1 : 0) + (snaps.find(b) ? 1 : 0);
        REQUIRE(pool.ref_count(b) == want);
      }
      for (const auto& [b, tokens] : prefix_of) {
        REQUIRE(tree.stores(b));
        REQUIRE(tree.peek_matched_tokens(ns, tokens) == tokens.size());
        REQUIRE(snaps.find(b)->depth == static_cast<std::int32_t>(tokens.size()));
      }
      std::int32_t on_device = 0, spilled = 0;
      for (const snapshot_entry* e : snaps.entries()) (e->slot >= 0 ? on_device : spilled) += 1;
      REQUIRE(on_device + snaps.num_free_slots() == 5);
      REQUIRE(spilled + snaps.num_free_host_slots() == 3);
    }
  }
}

}  // namespace courier_test_cache_snapshot_index
