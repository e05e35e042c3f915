#include "actors/scheduler/scheduler_report.hpp"

namespace courier::actors {

std::optional<msg::telemetry_report> scheduler_report::take(const msg::scheduler_stats& now,
                                                            std::int32_t num_running,
                                                            std::int32_t num_waiting,
                                                            double kv_usage,
                                                            double state_usage) {
  if (!dirty_) return std::nullopt;
  msg::telemetry_report r = std::move(report_);
  report_ = {};
  dirty_ = false;
  // Counters the scheduler's stats already count: the increments since the last report.
  const msg::scheduler_stats& was = reported_;
#define COURIER_DIFF(field, metric, label, help) r.field = now.field - was.field;
  COURIER_SCHEDULER_COUNTERS(COURIER_DIFF)
#undef COURIER_DIFF
  r.spec_drafts = now.spec_drafts - was.spec_drafts;
  r.host_cached_blocks = now.num_host_cached_blocks;
  r.cached_blocks = now.num_cached_blocks;
  r.disk_cached_blocks = now.num_disk_cached_blocks;
  r.lora_slots_in_use = now.lora_slots_in_use;
  auto bytes = [&](std::uint64_t blocks) {
    return static_cast<std::uint64_t>(static_cast<double>(blocks) * block_bytes_);
  };
  r.host_tier_out_bytes = bytes(r.host_cache_spilled_blocks + r.swapped_out_blocks);
  r.host_tier_in_bytes = bytes(r.host_cache_promoted_blocks + r.swapped_in_blocks);
  r.disk_written_bytes = bytes(now.disk_written_blocks - was.disk_written_blocks);
  r.disk_read_bytes = bytes(now.disk_read_blocks - was.disk_read_blocks);
  r.snapshot_usage = now.snapshot_capacity > 0 ? static_cast<double>(now.num_snapshots) /
                                                     static_cast<double>(now.snapshot_capacity)
                                               : 0.0;
  reported_ = now;
  r.num_running = num_running;
  r.num_waiting = num_waiting;
  r.kv_usage = kv_usage;
  r.state_usage = state_usage;
  return r;
}

}  // namespace courier::actors
