#pragma once
// Per-request phases reconstructed from scheduler and engine spans:
//
//   submit ──queue──► first row ──prefill──► end of last prefill step ──decode──► finish
//
// A row's ts is when its step's plan was sent; a step ends at that ts plus the engine's
// "step_plan" duration for the step (or at the row's ts when the engine span was dropped).
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

// Invariants: times are on the trace's clock; a phase is present only when both of its ends
// were seen, so a request cancelled in the queue has no queue time.
struct request_phases {
  std::int64_t req = 0;
  std::int64_t submit_ns = 0;                  // first scheduler "submit"
  std::optional<std::int64_t> first_row_ns;    // first scheduler "row"
  std::optional<std::int64_t> prefill_end_ns;  // end of the step of the last row with prefill>0
  std::optional<std::int64_t> finish_ns;       // first scheduler "finish"
  std::uint32_t num_steps = 0;                 // distinct steps with a row for this request

  std::optional<std::int64_t> queue_ns() const;
  std::optional<std::int64_t> prefill_ns() const;
  std::optional<std::int64_t> decode_ns() const;
  bool complete() const { return queue_ns() && prefill_ns() && decode_ns(); }
};

// Step number -> index in trace::spans of the engine "step_plan" for that step (the first,
// should the engine ever repeat a number). The server omits zero fields, so a step span
// without "step" is step 0.
std::unordered_map<std::uint32_t, std::size_t> index_engine_steps(const trace& t);

// One entry per distinct req id of a scheduler "submit", in order of first submit.
std::vector<request_phases> compute_request_phases(const trace& t);

}  // namespace courier::trace_tool
