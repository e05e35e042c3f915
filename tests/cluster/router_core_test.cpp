// The router's choices against replicas that are real prefix caches (radix trees) whose own
// events feed the router's indexes: cache-aware routing follows the cached prefix while loads
// are balanced and the least loaded replica when they are not; tenants never match each other's
// blocks; round robin and least loaded; replicas going down and coming back.
#include "cluster/router_core.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "cache/radix_tree.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cluster_router_core {

using namespace courier;

namespace {

constexpr std::size_t bs = 4;

// A replica's prefix cache, reporting its events to the router after each operation.
struct fake_replica {
  cache::block_pool pool{256};
  cache::radix_tree tree{pool, bs};
  cache::cache_event_log log;
  fake_replica() { tree.record_events(&log); }

  // Serves `prompt` (stores its blocks) and hands the events to router r.
  void serve(cluster::router_core& router, std::size_t r, const cache::cache_namespace& ns,
             const std::vector<cache::token_id>& prompt) {
    auto table = cache::block_refs::allocate(pool, prompt.size() / bs);
    REQUIRE(table);
    (void)tree.insert(ns, prompt, *table, 0);
    tree.release(std::move(*table));
    router.on_events(r, log);
    log.clear();
  }
};

std::vector<cache::token_id> prompt(cache::token_id head, std::size_t head_len,
                                    cache::token_id tail) {
  std::vector<cache::token_id> p;
  for (std::size_t i = 0; i < head_len; ++i) p.push_back(head + static_cast<cache::token_id>(i));
  for (std::size_t i = 0; i < 4; ++i) p.push_back(tail * 100 + static_cast<cache::token_id>(i));
  return p;
}

cluster::routing_options options(cluster::routing_policy p) {
  cluster::routing_options o;
  o.policy = p;
  o.block_size = bs;
  o.balance_abs = 2;
  o.balance_rel = 1.5;
  return o;
}

}  // namespace

TEST_CASE("router: cache-aware follows the replica holding the prompt's prefix while balanced",
          "[cluster]") {
  cluster::router_core router(2, options(cluster::routing_policy::cache_aware));
  std::vector<fake_replica> replicas(2);
  const cache::cache_namespace base{};
  const auto a = prompt(1000, 16, 1);  // 4 head blocks + 1
  // Nothing cached: the least loaded (a tie: the lowest index).
  std::optional<std::size_t> r = router.choose(base, a);
  REQUIRE(r == std::optional<std::size_t>(0));
  replicas[0].serve(router, 0, base, a);
  // Replica 0 is busier (1 in flight) but within the balance: the same head goes there.
  std::size_t matched = 0;
  r = router.choose(base, prompt(1000, 16, 2), &matched);
  CHECK(r == std::optional<std::size_t>(0));
  CHECK(matched == 4);
  // Another head: nobody holds half of it, so the least loaded.
  r = router.choose(base, prompt(5000, 16, 3));
  CHECK(r == std::optional<std::size_t>(1));
  // The head's requests pile onto replica 0 while within the balance (at most 2 in flight
  // above replica 1); past it, the head goes to replica 1 although replica 0 holds it.
  CHECK(router.choose(base, prompt(1000, 16, 10)) == std::optional<std::size_t>(0));  // 3 vs 1
  CHECK(router.choose(base, prompt(1000, 16, 11)) == std::optional<std::size_t>(0));  // 4 vs 1
  CHECK(router.choose(base, prompt(1000, 16, 12)) == std::optional<std::size_t>(1));
  REQUIRE(router.load(0) == 4);
  REQUIRE(router.load(1) == 2);
  // Requests end: balanced again, and the head goes back to replica 0.
  for (int i = 0; i < 4; ++i) router.finished(0);
  for (int i = 0; i < 2; ++i) router.finished(1);
  CHECK(router.choose(base, prompt(1000, 16, 21)) == std::optional<std::size_t>(0));
}

TEST_CASE("router: a tenant's prompt never matches another tenant's blocks; evicted blocks stop "
          "matching",
          "[cluster]") {
  cluster::router_core router(2, options(cluster::routing_policy::cache_aware));
  std::vector<fake_replica> replicas(2);
  const cache::cache_namespace t1{0, "tenant-1"}, t2{0, "tenant-2"};
  const auto p = prompt(7000, 16, 1);
  std::vector<std::uint64_t> h;
  (void)router.choose(t1, p, nullptr, &h);
  replicas[0].serve(router, 0, t1, p);
  router.finished(0, h);
  std::size_t matched = 99;
  (void)router.choose(t2, p, &matched, &h);
  CHECK(matched == 0);
  router.finished(0, h);
  (void)router.choose(t1, p, &matched, &h);
  CHECK(matched == 5);  // the whole prompt: 5 blocks
  router.finished(0, h);
  // Replica 0 evicts everything: its removed events empty the router's index of it.
  (void)replicas[0].tree.evict(100);
  router.on_events(0, replicas[0].log);
  CHECK(router.index(0).size() == 0);
  (void)router.choose(t1, p, &matched);
  CHECK(matched == 0);
}

TEST_CASE("router: a block a replica's host or disk tier keeps still counts as held there; it "
          "stops when no medium keeps it",
          "[cluster]") {
  cluster::router_core router(1, options(cluster::routing_policy::cache_aware));
  const cache::cache_namespace ns{};
  const auto p = prompt(9000, 8, 3);
  const auto h = cluster::prompt_hashes(ns, p, bs);  // 3 blocks
  REQUIRE(h.size() == 3);
  cache::cache_event_log log;
  cache::cache_event stored;  // on the device, as the radix tree announces them
  stored.hashes = h;
  stored.block_size = bs;
  log.push_back(stored);
  // The device evicts its last two blocks to the host tier, which writes one to disk.
  cache::append_tier_event(&log, cache::cache_event::kind::stored, cache::cache_medium::cpu, h[1],
                           bs);
  cache::append_tier_event(&log, cache::cache_event::kind::stored, cache::cache_medium::cpu, h[2],
                           bs);
  cache::append_tier_event(&log, cache::cache_event::kind::stored, cache::cache_medium::disk,
                           h[2], bs);
  cache::cache_event gone;
  gone.what = cache::cache_event::kind::removed;
  gone.hashes = {h[1], h[2]};
  log.push_back(gone);
  router.on_events(0, log);
  CHECK(router.index(0).matched_blocks(h) == 3);
  // The host tier lets both go: the disk still keeps the last, but the second is gone.
  log.clear();
  cache::append_tier_event(&log, cache::cache_event::kind::removed, cache::cache_medium::cpu,
                           h[1], 0);
  cache::append_tier_event(&log, cache::cache_event::kind::removed, cache::cache_medium::cpu,
                           h[2], 0);
  router.on_events(0, log);
  CHECK(router.index(0).matched_blocks(h) == 1);
  CHECK(router.index(0).size() == 2);
  log.clear();
  cache::append_tier_event(&log, cache::cache_event::kind::removed, cache::cache_medium::disk,
                           h[2], 0);
  router.on_events(0, log);
  CHECK(router.index(0).size() == 1);
}

TEST_CASE("router: a prompt routed and not ended counts as held there, so the next with its head "
          "follows it before any event; once it ends, only events count",
          "[cluster]") {
  cluster::router_core router(2, options(cluster::routing_policy::cache_aware));
  const cache::cache_namespace base{};
  std::vector<std::uint64_t> first_hashes, h;
  REQUIRE(router.choose(base, prompt(300, 16, 1), nullptr, &first_hashes) ==
          std::optional<std::size_t>(0));
  std::size_t matched = 0;
  CHECK(router.choose(base, prompt(300, 16, 2), &matched, &h) == std::optional<std::size_t>(0));
  CHECK(matched == 4);  // the head, pending on replica 0
  router.finished(0, h);
  router.finished(0, first_hashes);  // ended with no event: the replica kept nothing
  CHECK(router.choose(base, prompt(300, 16, 3), &matched, &h) == std::optional<std::size_t>(0));
  CHECK(matched == 0);
  router.finished(0, h);
  // A batch's other choices go with its first: in flight there, their blocks pending, until
  // each ends.
  const std::vector<std::uint64_t> other = router.start_on(1, base, prompt(900, 16, 1));
  CHECK(router.load(1) == 1);
  CHECK(router.choose(base, prompt(900, 16, 2), &matched, &h) == std::optional<std::size_t>(1));
  CHECK(matched == 4);
  router.finished(1, h);
  router.finished(1, other);
  CHECK(router.load(1) == 0);
  (void)router.choose(base, prompt(900, 16, 3), &matched);
  CHECK(matched == 0);
}

TEST_CASE("router: round robin and least loaded skip replicas that are down; none up, no choice",
          "[cluster]") {
  const cache::cache_namespace base{};
  const auto p = prompt(1, 8, 1);
  cluster::router_core rr(3, options(cluster::routing_policy::round_robin));
  std::vector<std::size_t> order;
  for (int i = 0; i < 4; ++i) order.push_back(*rr.choose(base, p));
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 0});
  rr.set_up(1, false);
  order.clear();
  for (int i = 0; i < 3; ++i) order.push_back(*rr.choose(base, p));
  CHECK(order == std::vector<std::size_t>{2, 0, 2});
  rr.set_up(0, false);
  rr.set_up(2, false);
  CHECK_FALSE(rr.choose(base, p).has_value());
  rr.set_up(1, true);
  CHECK(rr.choose(base, p) == std::optional<std::size_t>(1));

  cluster::router_core ll(2, options(cluster::routing_policy::least_loaded));
  CHECK(*ll.choose(base, p) == 0);
  CHECK(*ll.choose(base, p) == 1);
  CHECK(*ll.choose(base, p) == 0);
  ll.finished(1);
  CHECK(*ll.choose(base, p) == 1);
  // A replica that goes down forgets its index and load; back up, it is filled by its events.
  cluster::router_core ca(2, options(cluster::routing_policy::cache_aware));
  std::vector<fake_replica> replicas(2);
  replicas[1].serve(ca, 1, base, p);
  ca.set_up(1, false);
  CHECK(ca.index(1).size() == 0);
  std::vector<std::uint64_t> h;
  CHECK(*ca.choose(base, p, nullptr, &h) == 0);
  ca.finished(0, h);
  ca.set_up(1, true);
  fake_replica restarted;  // it comes back empty, and says what it stores from then on
  restarted.serve(ca, 1, base, prompt(1, 8, 2));
  std::size_t matched = 0;
  CHECK(*ca.choose(base, p, &matched) == 1);
  CHECK(matched == 2);
}

}  // namespace courier_test_cluster_router_core
