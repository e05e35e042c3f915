// Routing policies on a shared-prefix workload, with replicas that are real prefix caches
// (radix trees over block pools, LRU eviction) feeding their own cache events to the router
// (cluster/router_core): prints, per policy, the share of prompt tokens the chosen replica had
// cached, beside one server holding all the replicas' blocks. Requests stay in flight for a
// window of later arrivals (the load the balance thresholds see). A simulation of the caches
// only: no model runs, so it isolates what the routing policy does to the cached share.
//
//   routing_sim [replicas 3] [blocks_per_replica 400] [groups 24] [requests 6000]
#include <fmt/format.h>

#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "cache/radix_tree.hpp"
#include "cluster/router_core.hpp"

namespace {

using namespace courier;

constexpr std::size_t block_size = 16;
constexpr std::size_t head_tokens = 512;  // each group's shared system prompt: 32 blocks
constexpr std::size_t tail_tokens = 64;   // each request's own part
constexpr std::size_t window = 48;        // requests in flight at once

struct replica {
  cache::block_pool pool;
  cache::radix_tree tree;
  cache::cache_event_log log;
  explicit replica(std::size_t blocks) : pool(blocks), tree(pool, block_size) {
    tree.record_events(&log);
  }
  // Serves a prompt as the scheduler would: reuse the cached prefix, compute the rest into fresh
  // blocks (evicting least recently used ones), keep it. Returns the tokens it had cached.
  std::size_t serve(const std::vector<cache::token_id>& prompt) {
    const cache::cache_namespace ns{};
    cache::prefix_match m = tree.lookup(ns, prompt);
    const std::size_t hit = m.num_tokens();
    const std::size_t need = prompt.size() / block_size - hit / block_size;
    if (pool.num_free() < need) (void)tree.evict(need - pool.num_free());
    auto fresh = cache::block_refs::allocate(pool, need);
    if (!fresh) {  // everything else is held: serve it uncached
      tree.release_matched(std::move(m));
      return 0;
    }
    cache::block_refs table = m.take_blocks();
    table.append(std::move(*fresh));
    (void)tree.insert(ns, prompt, table, hit);
    tree.release(std::move(table));
    return hit;
  }
};

double run(cluster::routing_policy policy, std::size_t n, std::size_t blocks, std::size_t groups,
           std::size_t requests, bool single) {
  std::vector<std::unique_ptr<replica>> rs;
  const std::size_t count = single ? 1 : n;
  for (std::size_t i = 0; i < count; ++i) {
    rs.push_back(std::make_unique<replica>(single ? blocks * n : blocks));
  }
  cluster::routing_options o;
  o.policy = policy;
  o.block_size = block_size;
  cluster::router_core router(count, o);
  std::mt19937 rng(7);
  std::deque<std::pair<std::size_t, std::vector<std::uint64_t>>> in_flight;
  std::size_t hit = 0, total = 0;
  for (std::size_t q = 0; q < requests; ++q) {
    const auto g = static_cast<cache::token_id>(rng() % groups);
    std::vector<cache::token_id> prompt;
    for (std::size_t t = 0; t < head_tokens; ++t) {
      prompt.push_back(static_cast<cache::token_id>(g * 100000 + t));
    }
    for (std::size_t t = 0; t < tail_tokens; ++t) prompt.push_back(rng() % 50000 + 5000000);
    std::vector<std::uint64_t> hashes;
    const std::size_t r = *router.choose(cache::cache_namespace{}, prompt, nullptr, &hashes);
    hit += rs[r]->serve(prompt);
    total += prompt.size();
    router.on_events(r, rs[r]->log);  // no lag: the events of one request before the next
    rs[r]->log.clear();
    in_flight.emplace_back(r, std::move(hashes));
    if (in_flight.size() > window) {
      router.finished(in_flight.front().first, in_flight.front().second);
      in_flight.pop_front();
    }
  }
  return static_cast<double>(hit) / static_cast<double>(total);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 3;
  const std::size_t blocks = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 400;
  const std::size_t groups = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 24;
  const std::size_t requests = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 6000;
  fmt::print("{} replicas of {} blocks, {} prompt groups ({} shared + {} own tokens), {} "
             "requests, {} in flight\n",
             n, blocks, groups, head_tokens, tail_tokens, requests, window);
  fmt::print("one server of {} blocks: cached share {:.3f}\n", n * blocks,
             run(cluster::routing_policy::least_loaded, n, blocks, groups, requests, true));
  const std::pair<const char*, cluster::routing_policy> policies[] = {
      {"cache_aware", cluster::routing_policy::cache_aware},
      {"least_loaded", cluster::routing_policy::least_loaded},
      {"round_robin", cluster::routing_policy::round_robin}};
  for (const auto& [name, p] : policies) {
    fmt::print("{:>12}: cached share {:.3f}\n", name, run(p, n, blocks, groups, requests, false));
  }
}
