// The KV tiers under random operation sequences: requests arriving, being cancelled and
// preempted (swapped or recomputed) while steps run, documents moving between device, host and
// disk, copies back to the device done late on the copy stream (or failing), disk copies
// answered late, failing, damaged or past their deadline, in any order. After
// every operation the core's invariants hold (every device and host block has its holders, every
// sequence is in one queue); every row finds exactly its prefix's KV (the model of the blocks in
// kv_device_model.hpp); every request ends once, with the tokens it would give alone unless
// cancelled; and when all is done every device block is free and every host block is free or
// kept by the host tier.
#include <catch2/catch.hpp>

#include <deque>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>

#include "tests/support/kv_device_model.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_tiers_random {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using test::disk_model;
using test::kv_device;

namespace {

void run_random(unsigned seed) {
  std::mt19937 rng(seed);
  scheduler_options o;
  o.overlap = rng() % 2;
  o.max_batched_tokens = 48;
  o.isolate_by_tenant = true;
  o.disk.num_slots = 48;  // small: the disk evicts too
  o.disk.max_writes_in_flight = 1 + static_cast<std::int32_t>(rng() % 6);
  using mode = scheduler_options::preemption_mode;
  o.preemption = std::array<mode, 3>{mode::automatic, mode::swap, mode::recompute}[rng() % 3];
  msg::engine_ready ready = test::fake_engine_ready(24);
  ready.host_kv_blocks = 16 + static_cast<std::int32_t>(rng() % 24);
  actors::scheduler_core core(o, ready);
  kv_device dev;
  disk_model disk;
  disk.fail_write_every = 7;
  disk.corrupt_every = 5;
  dev.fail_copy_batch_every = 5;
  test::core_events ev;
  std::vector<std::vector<msg::token_id>> docs(4);
  for (auto& d : docs) {
    for (int t = 0; t < 64 + static_cast<int>(rng() % 96); ++t) d.push_back(rng() % 500);
  }
  std::map<msg::request_id, int> want;  // max_tokens
  std::set<msg::request_id> cancelled;
  std::vector<outgoing_event> out;
  std::deque<msg::step_result> flights;
  std::deque<kv_device::accepted> behind;  // planned, not yet run by the device (in order)
  auto device_runs_one = [&] {
    dev.execute(behind.front());
    behind.pop_front();
  };
  auto answer_step = [&] {  // the device has run it (and everything before it)
    while (behind.size() > flights.size() - 1) device_runs_one();
    core.on_result(std::move(flights.front()), out);
    flights.pop_front();
  };
  msg::request_id next_id = 1;
  auto copies_land = [&] {  // the copy stream finishes one of its batches (any of them)
    if (dev.copying.empty()) return;
    auto it = dev.copying.begin();
    std::advance(it, static_cast<long>(rng() % dev.copying.size()));
    core.on_copies_done(dev.finish_copies(it->first));
  };
  auto check = [&] {
    ev.take(out);
    core.check_invariants();
  };
  for (int op = 0; op < 1500; ++op) {
    const unsigned pick = rng() % 22;
    if (pick < 3) {  // a request: a document and a question, or a prompt of its own
      msg::submit s;
      s.id = next_id++;
      s.tenant = rng() % 2 ? "team-a" : "team-b";
      if (rng() % 4 != 0) s.prompt = docs[rng() % docs.size()];
      for (int t = 0; t < 3 + static_cast<int>(rng() % 40); ++t) s.prompt.push_back(rng() % 500);
      s.max_tokens = 1 + static_cast<int>(rng() % 24);
      s.ignore_eos = true;
      dev.prompts[s.id] = s.prompt;
      want[s.id] = s.max_tokens;
      core.submit(s, out);
    } else if (pick == 3 && next_id > 1) {  // a client goes away
      const msg::request_id id = 1 + rng() % (next_id - 1);
      if (!ev.last.count(id)) cancelled.insert(id);
      core.cancel(id, out);
    } else if (pick < 8) {  // the scheduler plans
      if (auto p = core.plan(out)) {
        behind.push_back(dev.accept(*p, core));
        flights.push_back(test::fake_engine(*p));
      }
    } else if (pick < 10) {  // the device runs a step (the disk may be ahead of it or behind)
      if (!behind.empty()) device_runs_one();
    } else if (pick < 15) {  // the engine answers
      if (!flights.empty()) answer_step();
    } else if (pick < 18) {  // the disk answers its oldest batch
      disk.take(core, dev);
      if (!disk.pending.empty()) core.on_disk_done(disk.answer_one(dev));
    } else if (pick == 18) {  // a batch's deadline passes
      disk.take(core, dev);
      if (!disk.pending.empty()) {
        core.on_disk_deadline(disk.pending[rng() % disk.pending.size()].first.id);
      }
    } else if (pick < 21) {
      copies_land();
    } else {
      disk.take(core, dev);
    }
    check();
  }
  // Everything ends: the steps and the disk answer until nothing is left.
  for (int rounds = 0; rounds < 100000; ++rounds) {
    disk.take(core, dev);
    auto p = core.plan(out);
    if (p) {
      behind.push_back(dev.accept(*p, core));
      flights.push_back(test::fake_engine(*p));
    }
    // The engine, the copy stream and the disk each go on (none waits for the others).
    const bool idle = !p && flights.empty() && dev.copying.empty() && disk.pending.empty();
    if (idle) break;
    if (!flights.empty()) answer_step();
    check();
    copies_land();
    check();
    if (!disk.pending.empty()) core.on_disk_done(disk.answer_one(dev));
    check();
  }
  const msg::scheduler_stats st = core.stats();
  CHECK(st.num_running + st.num_waiting + st.num_loading == 0);
  for (const auto& [id, n] : want) {
    INFO("request " << id);
    REQUIRE(ev.last.count(id));
    if (cancelled.count(id) && ev.last.at(id).finish == msg::finish_reason::cancelled) continue;
    CHECK(ev.last.at(id).finish == msg::finish_reason::length);
    CHECK(ev.tokens.at(id) ==
          test::expected_tokens(id, static_cast<int>(dev.prompts.at(id).size()), n));
  }
  core.evict_all_cached();
  core.check_invariants();
  const msg::scheduler_stats end = core.stats();
  CHECK(end.num_free_blocks == 24);
  INFO("host blocks " << ready.host_kv_blocks << ", preemptions " << end.num_preemptions
                      << ", swaps " << end.swap_outs << ", disk reads " << end.disk_read_blocks
                      << " (" << end.disk_read_failures << " failed), writes "
                      << end.disk_written_blocks << " (" << end.disk_write_failures << " failed)");
  CHECK(end.disk_written_blocks > 0);
  CHECK(end.disk_read_blocks > 0);
  CHECK(end.copy_batches > 0);
  CHECK(end.copy_batch_failures > 0);
  CHECK(dev.copying.empty());
}

}  // namespace

TEST_CASE("tiers: random operations keep every block accounted for and every output right",
          "[scheduler]") {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    run_random(seed);
  }
}

}  // namespace courier_test_actors_scheduler_tiers_random
