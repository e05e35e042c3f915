#pragma once
// When a request arrived, was first planned and got its tokens, on the scheduler's clock
// (steady nanoseconds, the trace's: scheduler_options::clock), and the latencies its summary
// reports from them, as vLLM's request metrics define them: queue (arrival to first planned),
// prefill (first planned to first token), TTFT (arrival to first token), decode (first token to
// the end), end to end, and one inter-token interval per step that gave it tokens.
#include <cstdint>
#include <utility>
#include <vector>

#include "messages/telemetry.hpp"

namespace courier::actors {

struct request_timing {
  std::int64_t arrival_ns = 0;
  std::int64_t scheduled_ns = 0;  // first planned; 0: not yet
  std::int64_t first_token_ns = 0;
  std::int64_t last_token_ns = 0;
  std::vector<float> inter_token_s;  // between consecutive steps that gave it tokens

  // Tokens came at now_ns (however many: one interval per step).
  void tokens_at(std::int64_t now_ns) {
    if (first_token_ns == 0) {
      first_token_ns = now_ns;
    } else if (now_ns != last_token_ns) {
      inter_token_s.push_back(static_cast<float>(now_ns - last_token_ns) * 1e-9f);
    }
    last_token_ns = now_ns;
  }

  // The request ends at now_ns: its latencies into `q`, where one it never reached is left as
  // `q` has it (-1 in a new summary); the intervals move there.
  void summarize(msg::request_summary& q, std::int64_t now_ns) {
    auto seconds = [](std::int64_t from, std::int64_t to) {
      return static_cast<double>(to - from) * 1e-9;
    };
    q.e2e_s = seconds(arrival_ns, now_ns);
    if (scheduled_ns) {
      q.queue_s = seconds(arrival_ns, scheduled_ns);
      if (first_token_ns) q.prefill_s = seconds(scheduled_ns, first_token_ns);
    }
    if (first_token_ns) {
      q.ttft_s = seconds(arrival_ns, first_token_ns);
      q.decode_s = seconds(first_token_ns, now_ns);
    }
    q.inter_token_s = std::move(inter_token_s);
  }
};

}  // namespace courier::actors
