// Speed of the cache's hot operations (goal: each well under 100 us). Build with -O2:
//   g++ -std=c++17 -O2 -I. bench/cache/cache_bench.cpp cache/*.cpp -lbenchmark -lpthread
// Where a benchmark needs untimed setup in its loop it reports manual time, measured as this
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that a busy shared machine does not inflate it.
#include <benchmark/benchmark.h>

#include <time.h>
#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "cache/radix_tree.hpp"
#include "cache/shared_lookup_cache.hpp"

using namespace courier::cache;

namespace {

constexpr std::size_t block_size = 16;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
const cache_namespace ns{};

std::vector<token_id> random_tokens(std::mt19937& rng, std::size_t n, token_id vocab) {
  std::vector<token_id> out(n);
  for (token_id& t : out) t = static_cast<token_id>(rng() % vocab);
  return out;
}

// A sequence that computed `tokens` (after a lookup) and finished: insert, release.
void store(radix_tree& tree, block_pool& pool, const std::vector<token_id>& tokens) {
  prefix_match m = tree.lookup(ns, tokens);
  block_refs table = m.take_blocks();
  std::optional<block_refs> rest =
      block_refs::allocate(pool, tokens.size() / block_size - table.size());
  if (!rest) throw std::runtime_error("bench: pool too small");
  table.append(std::move(*rest));
  (void)tree.insert(ns, tokens, table, m.num_tokens());
  tree.release(std::move(table));
}

// The scheduler's work for a 32k-token prompt whose first half is cached: lookup, allocate the
// rest, insert, release. Timed alone (manual time); the tree is set up untimed.
double time_lookup_insert(radix_tree& tree, block_pool& pool, const std::vector<token_id>& prompt) {
  const token_span reusable = token_span(prompt).first(prompt.size() - 1);
  const double start = thread_cpu_seconds();
  prefix_match m = tree.lookup(ns, reusable);
  std::optional<block_refs> rest =
      block_refs::allocate(pool, prompt.size() / block_size - m.blocks().size());
  block_refs table = m.take_blocks();
  table.append(std::move(*rest));
  const insert_result r = tree.insert(ns, prompt, table, m.num_tokens());
  benchmark::DoNotOptimize(r.stored.data());
  tree.release(std::move(table));
  const double stop = thread_cpu_seconds();
  if (r.stored.size() != prompt.size() / block_size / 2) throw std::logic_error("bench: no hit");
  return stop - start;
}

constexpr std::size_t prompt_tokens = 32768;

// Arg 0: the tree holds another 32k prompt with the same first half, so the lookup splits
// its node (a new tree each iteration). Arg 1: steady state, the shared half is already a
// node of its own (one tree; the previous prompt's tail is evicted untimed).
void bm_lookup_insert_32k_half_shared(benchmark::State& state) {
  std::mt19937 rng(1);
  const std::vector<token_id> shared = random_tokens(rng, prompt_tokens / 2, 32000);
  auto make_prompt = [&] {
    std::vector<token_id> p = shared;
    const std::vector<token_id> tail = random_tokens(rng, prompt_tokens / 2, 32000);
    p.insert(p.end(), tail.begin(), tail.end());
    return p;
  };
  const std::vector<token_id> cached = make_prompt();
  const std::vector<token_id> prompt = make_prompt();
  if (state.range(0) == 0) {
    for (auto _ : state) {
      block_pool pool(8192);
      radix_tree tree(pool, block_size);
      store(tree, pool, cached);
      state.SetIterationTime(time_lookup_insert(tree, pool, prompt));
    }
    return;
  }
  block_pool pool(8192);
  radix_tree tree(pool, block_size);
  store(tree, pool, cached);
  store(tree, pool, make_prompt());
  for (auto _ : state) {
    if (tree.evict(prompt_tokens / 2 / block_size).size() != prompt_tokens / 2 / block_size) {
      state.SkipWithError("bench: eviction failed");
    }
    state.SetIterationTime(time_lookup_insert(tree, pool, make_prompt()));
  }
}
BENCHMARK(bm_lookup_insert_32k_half_shared)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// evict(1000) from a tree of 100k blocks, refilled (untimed) after each call. Arg 0: 1,040
// conversations of 96 blocks after a 32-block shared system prompt, the 256 oldest still held
// by running sequences (evict skips them every time). Arg 1: 100k one-block leaves.
void bm_evict_1000_of_100k(benchmark::State& state) {
  const bool one_block_leaves = state.range(0) == 1;
  std::mt19937 rng(2);
  const std::size_t target_blocks = 100000;
  block_pool pool(static_cast<std::int32_t>(target_blocks + 40000));
  radix_tree tree(pool, block_size);
  const std::vector<token_id> system_prompt =
      random_tokens(rng, (one_block_leaves ? 1 : 32) * block_size, 32000);
  const std::size_t tail_tokens = (one_block_leaves ? 1 : 96) * block_size;
  std::vector<block_refs> running;
  auto refill = [&] {
    while (tree.stats().num_blocks < target_blocks) {
      std::vector<token_id> tokens = system_prompt;
      const std::vector<token_id> tail = random_tokens(rng, tail_tokens, 32000);
      tokens.insert(tokens.end(), tail.begin(), tail.end());
      store(tree, pool, tokens);
      if (!one_block_leaves && running.size() < 256) {
        prefix_match held = tree.pin_prefix(ns, tokens);
        running.push_back(held.take_blocks());
      }
    }
  };
  refill();
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    const std::vector<block_id> evicted = tree.evict(1000);
    state.SetIterationTime(thread_cpu_seconds() - start);
    if (evicted.size() != 1000) state.SkipWithError("evicted fewer than 1000 blocks");
    benchmark::DoNotOptimize(evicted.data());
    refill();
  }
  state.counters["tree_nodes"] = static_cast<double>(tree.stats().num_nodes);
}
BENCHMARK(bm_evict_1000_of_100k)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);

// propose() against one scope whose store is full (Arg: MB), for a history of 4k tokens with
// nothing to find in itself, ending in a 2-gram that recurs throughout the store (a vocabulary
// of 100 tokens: long index chains, every candidate tried).
void bm_propose(benchmark::State& state) {
  const std::size_t capacity = static_cast<std::size_t>(state.range(0)) << 20;
  std::mt19937 rng(3);
  shared_lookup_cache cache({capacity, 1, ngram_config{2, 5, 16}});
  const lookup_scope scope{"model", "tokenizer", "", "tenant"};
  const std::size_t sequences = capacity / token_store::bytes_per_token / 2048 + 1;
  for (std::size_t i = 0; i < sequences; ++i) cache.add(scope, random_tokens(rng, 2048, 100));
  std::vector<token_id> history(4096);
  for (std::size_t i = 0; i < history.size(); ++i) history[i] = static_cast<token_id>(1000 + i);
  history[history.size() - 2] = 7;
  history[history.size() - 1] = 42;
  std::size_t proposed = 0;
  for (auto _ : state) {
    const std::vector<token_id> draft = cache.propose(scope, history, 8);
    proposed += draft.size();
    benchmark::DoNotOptimize(draft.data());
  }
  state.counters["store_tokens"] = static_cast<double>(cache.find(scope)->num_tokens());
  state.counters["draft_len"] =
      static_cast<double>(proposed) / static_cast<double>(state.iterations());
}
BENCHMARK(bm_propose)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// The own-history half of propose() alone, which scans the whole history every decode step:
// a history of Arg tokens drawn from 32k ids, its last 3 tokens copied from its middle.
void bm_propose_own_history(benchmark::State& state) {
  std::mt19937 rng(4);
  std::vector<token_id> history =
      random_tokens(rng, static_cast<std::size_t>(state.range(0)), 32000);
  std::copy_n(history.begin() + static_cast<std::ptrdiff_t>(history.size() / 2), 3,
              history.end() - 3);
  const ngram_proposer proposer({2, 5, 16});
  for (auto _ : state) {
    const std::vector<token_id> draft = proposer.propose(history, 8);
    benchmark::DoNotOptimize(draft.data());
  }
}
BENCHMARK(bm_propose_own_history)->Arg(4096)->Arg(32768)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
