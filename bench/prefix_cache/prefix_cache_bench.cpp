// The hybrid prefix cache's policy alone (no model): the scheduler's kv_manager (radix tree,
// snapshot index, eviction policy) replays a workload one request at a time, and each policy's
// token hit rate (prompt tokens resumed from the cache / prompt tokens) is printed for the same
// memory budget. Costs are Nemotron-H-8B's: 24 Mamba-2 layers (128 heads x 64 x 128 f32 state:
// ~99 MB per snapshot), 4 attention layers (16 KB of bf16 KV per token), 8B parameters.
//
// Policies:
//   courier  snapshots at the prompt's last block boundary, every 512 prompt tokens, where the
//            prompt left a stored path, and at the output's last block boundary; eviction by
//            recency + FLOPs saved per byte weighted by each kind's learned reuse
//   marconi  the same snapshots, Marconi's utility as published (recency + FLOPs per byte)
//   exact    a snapshot at the prompt's last block boundary only; LRU
//   vllm     every block aligned to 528 tokens keeps its state (vLLM's hybrid prefix caching for
//            Qwen3.5-4B's page size): hits only at multiples of 528; LRU
//
// courier, marconi and exact give `--snapshot-share` of the budget to snapshot rows and the rest
// to 16-token KV blocks; vllm's 528-token blocks each hold their KV and a state.
//
//   prefix_cache_bench [--budget-gb 10,20,40] [--snapshot-share 0.5,0.75] [--seed 1]
#include <fmt/format.h>

#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "actors/scheduler/kv_manager.hpp"

namespace {

using courier::actors::kv_manager;
using courier::actors::prefix_namespace;
using courier::actors::resume_point;
using courier::actors::snapshot_setup;
using courier::cache::snapshot_kind;
using token = courier::msg::token_id;

constexpr double snapshot_bytes = 24.0 * (128 * 64 * 128 + 10240 * 3) * 4;
constexpr double kv_bytes_per_token = 4.0 * 2 * 8 * 128 * 2;
constexpr double linear_flops = 2.0 * 8e9;
constexpr double attention_flops = 4.0 * 32 * 128 * 4;

struct request {
  std::vector<token> prompt;
  std::vector<token> output;
};

std::vector<token> fresh(std::mt19937& rng, int n) {
  std::vector<token> t;
  for (int i = 0; i < n; ++i) t.push_back(static_cast<token>(rng() % 100000));
  return t;
}

int uniform(std::mt19937& rng, int lo, int hi) {
  return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
}

// Conversations of several turns over a few system prompts, interleaved: a turn's prompt is the
// conversation so far (its earlier prompts and answers) and a new message.
std::vector<request> multi_turn(std::mt19937& rng) {
  std::vector<std::vector<token>> systems;
  for (int i = 0; i < 4; ++i) systems.push_back(fresh(rng, 800));
  struct conversation {
    std::vector<token> so_far;
    int turns_left;
  };
  std::vector<conversation> live;
  for (int c = 0; c < 200; ++c) live.push_back({systems[rng() % systems.size()], uniform(rng, 2, 8)});
  std::vector<request> out;
  while (!live.empty()) {
    const std::size_t i = rng() % std::min<std::size_t>(live.size(), 24);  // ~24 active at once
    conversation& c = live[i];
    request r;
    const auto msg = fresh(rng, uniform(rng, 30, 400));
    c.so_far.insert(c.so_far.end(), msg.begin(), msg.end());
    r.prompt = c.so_far;
    r.output = fresh(rng, uniform(rng, 80, 500));
    c.so_far.insert(c.so_far.end(), r.output.begin(), r.output.end());
    out.push_back(std::move(r));
    if (--c.turns_left == 0) live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

// Questions about shared documents, the popular ones asked about more often.
std::vector<request> shared_documents(std::mt19937& rng) {
  std::vector<std::vector<token>> docs;
  for (int i = 0; i < 60; ++i) docs.push_back(fresh(rng, uniform(rng, 1500, 8000)));
  std::vector<request> out;
  for (int q = 0; q < 1000; ++q) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const auto d = static_cast<std::size_t>(static_cast<double>(docs.size()) * u * u * u);
    request r;
    r.prompt = docs[d];
    const auto ask = fresh(rng, uniform(rng, 20, 120));
    r.prompt.insert(r.prompt.end(), ask.begin(), ask.end());
    r.output = fresh(rng, uniform(rng, 50, 300));
    out.push_back(std::move(r));
  }
  return out;
}

enum class policy { courier, marconi, exact, vllm };

struct outcome {
  double hit_rate = 0;
  double snapshots_per_request = 0;
};

outcome replay(const std::vector<request>& work, policy p, double budget_bytes, double share) {
  const std::int32_t bs = p == policy::vllm ? 528 : 16;
  snapshot_setup setup;
  std::int32_t blocks = 0;
  if (p == policy::vllm) {  // each block keeps its KV and its state
    blocks = static_cast<std::int32_t>(budget_bytes / (bs * kv_bytes_per_token + snapshot_bytes));
    setup.num_slots = blocks;
  } else {  // `share` of the budget for snapshot rows, the rest for KV blocks
    setup.num_slots = static_cast<std::int32_t>(budget_bytes * share / snapshot_bytes);
    blocks = static_cast<std::int32_t>(budget_bytes * (1 - share) / (bs * kv_bytes_per_token));
  }
  const bool marconi_like = p == policy::courier || p == policy::marconi;
  setup.policy.alpha = marconi_like ? 1.0 : 0.0;
  setup.policy.learn_reuse = p == policy::courier;
  setup.policy.costs = {linear_flops, attention_flops, snapshot_bytes, kv_bytes_per_token};
  kv_manager kv(blocks, bs, true, setup);
  const prefix_namespace ns;
  std::uint64_t now = 0, hit = 0, asked = 0, taken = 0;
  for (const request& r : work) {
    std::vector<token> all = r.prompt;
    all.insert(all.end(), r.output.begin(), r.output.end());
    const auto n = static_cast<std::int32_t>(r.prompt.size());
    const auto total = static_cast<std::int32_t>(all.size());
    // The prompt's resume point (no host tiers here: the device's snapshots alone).
    kv_manager::prompt_resume l = kv.resume(ns, r.prompt, true, ++now);
    const resume_point& at = l.at;
    asked += static_cast<std::uint64_t>(n);
    courier::cache::block_refs table;
    kv.take(l.match, table);
    auto rest = kv.allocate((total + bs - 1) / bs - static_cast<std::int32_t>(table.size()));
    if (at.slot >= 0) kv.unpin_snapshot(at.block);
    if (!rest) {  // does not fit even after eviction: computed without caching
      kv.release(table);
      continue;
    }
    hit += static_cast<std::uint64_t>(at.tokens);
    table.append(std::move(*rest));
    // The computed tokens (all but the last output token), their full blocks stored.
    const std::int32_t computed = total - 1, full = computed / bs;
    std::vector<std::pair<std::int32_t, snapshot_kind>> snaps;
    if (p == policy::vllm) {
      for (std::int32_t d = (at.tokens / bs + 1) * bs; d <= full * bs; d += bs) {
        snaps.emplace_back(d, snapshot_kind::intermediate);
      }
    } else if (p == policy::exact) {
      const std::int32_t last = (n - 1) / bs * bs;
      if (last > at.tokens) snaps.emplace_back(last, snapshot_kind::exact);
    } else {  // the scheduler's own prefill points, then the answer's last block boundary
      for (const courier::actors::snapshot_point& s :
           courier::actors::prefill_snapshot_points(n, at.tokens, at.stored_tokens, bs, 512)) {
        snaps.emplace_back(s.depth, s.kind);
      }
      if (full * bs > (n - 1) / bs * bs) snaps.emplace_back(full * bs, snapshot_kind::tail);
    }
    std::vector<std::pair<std::size_t, std::int32_t>> rows;  // (snaps index, row)
    for (std::size_t i = 0; i < snaps.size(); ++i) {
      if (!kv.snapshots().worth_taking(snaps[i].second)) continue;
      if (auto row = kv.snapshots().take_snapshot_slot(true)) rows.emplace_back(i, *row);
    }
    kv.insert(ns, all, table, full, at.tokens);
    for (const auto& [i, row] : rows) {
      taken +=
          kv.snapshots().add_snapshot(ns, all, table, snaps[i].first, row, snaps[i].second, ++now);
    }
    kv.release(table);
  }
  kv.check_invariants();
  return {static_cast<double>(hit) / static_cast<double>(asked),
          static_cast<double>(taken) / static_cast<double>(work.size())};
}

std::vector<double> parse_list(const std::string& s) {
  std::vector<double> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stod(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> budgets = {10, 20, 40}, shares = {0.5, 0.75};
  unsigned seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--budget-gb") {
      budgets = parse_list(argv[i + 1]);
    } else if (a == "--snapshot-share") {
      shares = parse_list(argv[i + 1]);
    } else if (a == "--seed") {
      seed = static_cast<unsigned>(std::stoul(argv[i + 1]));
    } else {
      fmt::print(stderr, "usage: prefix_cache_bench [--budget-gb 10,20,40] "
                         "[--snapshot-share 0.5,0.75] [--seed 1]\n");
      return 2;
    }
  }
  fmt::print("token hit rate (prompt tokens resumed / prompt tokens); snapshot {:.1f} MB, KV "
             "{:.1f} KB/token (Nemotron-H-8B)\n",
             snapshot_bytes / 1e6, kv_bytes_per_token / 1e3);
  fmt::print("{:<12} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}\n", "workload", "GB",
             "share", "courier", "marconi", "exact", "vllm-528", "vs exact", "vs vllm",
             "vs marc.");
  for (const char* name : {"multi-turn", "shared-docs"}) {
    std::mt19937 rng(seed);
    const std::vector<request> work =
        std::string(name) == "multi-turn" ? multi_turn(rng) : shared_documents(rng);
    for (const double gb : budgets) {
      const double b = gb * 1e9;
      const outcome v = replay(work, policy::vllm, b, 0);
      for (const double share : shares) {
        const outcome c = replay(work, policy::courier, b, share),
                      m = replay(work, policy::marconi, b, share),
                      e = replay(work, policy::exact, b, share);
        auto ratio = [&](double x) { return x > 0 ? fmt::format("{:.2f}x", c.hit_rate / x) : "inf"; };
        fmt::print("{:<12} {:>6.0f} {:>6.2f} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>9} {:>9} {:>9}\n",
                   name, gb, share, 100 * c.hit_rate, 100 * m.hit_rate, 100 * e.hit_rate,
                   100 * v.hit_rate, ratio(e.hit_rate), ratio(v.hit_rate), ratio(m.hit_rate));
      }
    }
  }
  return 0;
}
