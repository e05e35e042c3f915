// kv_manager's detached snapshots (a hybrid's, with a KV host tier), directed: a snapshot
// pushed off the device by KV pressure moves to a host state row by its prefix's chain hash,
// its blocks to the host tier, and a later prompt on the same prefix finds both
// (find_host_resume) only once the step carrying their copies out has answered, and never if
// it failed.
#include <catch2/catch.hpp>

#include <vector>

#include "actors/scheduler/kv_manager.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_kv_detach {

using namespace courier;
using actors::kv_manager;

namespace {

constexpr std::int32_t bs = 16;

actors::snapshot_setup setup() {
  actors::snapshot_setup s;
  s.first_slot = 4;  // rows 0-3: sequences' state slots
  s.num_slots = 2;
  s.num_host_slots = 2;
  s.policy.costs.device_flops = 1e12;  // recomputing 64 tokens: 64 ms; copying a snapshot: 1 ms
  s.policy.costs.host_bytes_per_s = 1e9;
  s.policy.costs.snapshot_bytes = 1 << 20;
  s.policy.costs.linear_flops_per_token = 1e9;
  return s;
}

// A 64-token document stored with a snapshot at its end, then every device block asked for
// (pushing it out); returns the document and what find_host_resume finds after `answer` (0:
// nothing answered yet, 1: the step answered, -1: it failed).
std::int32_t resume_after(int answer, std::int32_t* host_rows_used = nullptr) {
  kv_manager kv(8, bs, true, setup(), 32);
  const actors::prefix_namespace ns{"", ""};
  std::vector<msg::token_id> doc;
  for (int i = 0; i < 64; ++i) doc.push_back(static_cast<msg::token_id>(i * 7 + 3));
  auto table = kv.allocate(4);
  REQUIRE(table);
  kv.insert(ns, doc, *table, 4, 0);
  const auto row = kv.snapshots().take_snapshot_slot(false);
  REQUIRE(row);
  REQUIRE(kv.snapshots().add_snapshot(ns, doc, *table, 64, *row, cache::snapshot_kind::exact, 1));
  kv.release(*table);
  kv.check_invariants();
  auto all = kv.allocate(8);  // the snapshot's block is held: it is detached, then evicted
  REQUIRE(all);
  CHECK(kv.snapshots().num_snapshots() == 0);
  CHECK(kv.snapshots().num_detached_snapshots() == 1);
  const std::vector<msg::state_copy> copies = kv.snapshots().take_state_copies();
  REQUIRE(copies.size() == 1);
  CHECK(copies[0].to_host);
  CHECK(copies[0].row == *row);
  if (host_rows_used) *host_rows_used = copies[0].host_row;
  const auto spilled = kv.host().take_spilled();
  const auto detached = kv.snapshots().take_detached();
  CHECK(spilled.size() == 4);
  kv.check_invariants();
  kv.host().spilled_answered(spilled, true);  // the blocks' copies stand either way here
  if (answer != 0) kv.snapshots().detached_answered(detached, answer > 0);
  kv.release(*all);
  std::vector<msg::token_id> prompt = doc;
  prompt.push_back(5);
  actors::resume_point at;  // nothing on the device
  const actors::host_resume r = kv.snapshots().find_host_resume(ns, prompt, at, 64, 2);
  if (r.tokens > 0) {
    CHECK(r.from_host.size() == 4);  // every block from the host tier
    CHECK(r.device_tokens == 0);
    CHECK(r.host_row == copies[0].host_row);
    kv.snapshots().unpin_detached(r.hash);
  }
  if (answer < 0) CHECK(kv.snapshots().num_detached_snapshots() == 0);
  kv.check_invariants();
  return r.tokens;
}

}  // namespace

TEST_CASE("kv detach: a snapshot pushed off the device is found with its blocks in the host "
          "tier once its copy has run, never before, never if it failed",
          "[scheduler]") {
  CHECK(resume_after(1) == 64);
  CHECK(resume_after(0) == 0);   // its copy out's step has not answered
  CHECK(resume_after(-1) == 0);  // that step failed: forgotten
}

}  // namespace courier_test_actors_scheduler_kv_detach
