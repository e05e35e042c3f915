#pragma once
// What the scheduler reports to the telemetry actor, kept apart from the planning code: planning
// says what happened (a prefix lookup, a prompt admitted, a step answered, a request ended, a
// gauge moved) and the report accumulates it until the actor takes it. Counters the scheduler's
// stats already count go out as increments since the report before, so the two never disagree.
#include <cstdint>
#include <optional>
#include <utility>

#include "messages/step.hpp"
#include "messages/telemetry.hpp"

namespace courier::actors {

class scheduler_report {
 public:
  // queried prompt tokens looked up in the prefix cache, hit of them reused (vLLM's counting).
  void prefix_lookup(std::uint64_t queried, std::uint64_t hit) {
    report_.prefix_queries += queried;
    report_.prefix_hits += hit;
    dirty_ = true;
  }
  void prompt_admitted(std::uint64_t tokens) {
    report_.prompt_tokens += tokens;
    dirty_ = true;
  }
  void step_answered(msg::step_summary step) {
    report_.steps.push_back(step);
    dirty_ = true;
  }
  void request_ended(msg::request_summary request) {
    report_.finished.push_back(std::move(request));
    dirty_ = true;
  }
  // Something the gauges or the stats' counters show changed (a step planned, a request queued).
  void changed() { dirty_ = true; }
  // One KV block's bytes over all layers (the tiers' bytes moved are blocks times this).
  void set_block_bytes(double bytes) { block_bytes_ = bytes; }

  // Everything since the last take, with `stats`' counters as increments since then and the
  // gauges given; nothing when nothing changed.
  std::optional<msg::telemetry_report> take(const msg::scheduler_stats& stats,
                                            std::int32_t num_running, std::int32_t num_waiting,
                                            double kv_usage, double state_usage = 0.0);

 private:
  double block_bytes_ = 0;
  msg::telemetry_report report_;
  msg::scheduler_stats reported_;  // stats at the last take
  bool dirty_ = false;
};

}  // namespace courier::actors
