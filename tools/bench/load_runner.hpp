#pragma once
// Drives a run: sends each request at its arrival offset, holds requests beyond
// max_concurrency until one in flight finishes (vLLM's semaphore: a held request's send time
// is when it is actually sent), and returns when every request has finished. One io_context
// on the calling thread does everything, so nothing here needs a lock.
//
// Never hangs: every request ends by its own deadline (client_config::timeout_s), and the
// arrival timer stops after the last arrival.
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "tools/bench/dataset.hpp"
#include "tools/bench/request_record.hpp"
#include "tools/bench/stream_request.hpp"

namespace courier::bench_tool {

struct load_config {
  client_config client;
  std::int64_t max_concurrency = 0;  // 0: unlimited
};

// One record per request, in the order of `requests`. `arrival_s` is non-decreasing and as
// long as `requests`. If the host does not resolve, every request fails with that error.
// `progress`, when given, gets a line at each tenth of the requests finished.
std::vector<request_record> run_load(const load_config& config,
                                     const std::vector<bench_request>& requests,
                                     const std::vector<double>& arrival_s,
                                     std::ostream* progress = nullptr);

}  // namespace courier::bench_tool
