#pragma once
// One benchmark request: sends a bench_request as a streaming OpenAI request and fills its
// request_record from the stream, timestamping each content chunk when its bytes arrive.
#include <functional>
#include <string>

#include "tools/bench/base_url.hpp"
#include "tools/bench/dataset.hpp"
#include "tools/bench/http_exchange.hpp"
#include "tools/bench/openai_stream.hpp"
#include "tools/bench/request_record.hpp"

namespace courier::bench_tool {

struct client_config {
  base_url url;
  std::string endpoint = "/v1/completions";
  std::string api_key;
  body_params body;
  double timeout_s = 600;
};

// Seconds since the start of the run.
using run_clock = std::function<double()>;

// Starts the request; `done` gets its record exactly once, on the io_context's thread, never
// from inside this call.
//
// Success needs all of: status 200, no transport error or deadline, no error event in the
// stream, a "[DONE]", and at least one content chunk (vLLM's "never received a valid chunk").
// Otherwise the error says which was first missing: "HTTP 500: <message>", the transport
// error, "stream error: <message>", "stream ended without [DONE]", "no content chunk".
void start_stream_request(boost::asio::io_context& io, const endpoint_list& endpoints,
                          const client_config& config, const bench_request& request,
                          const run_clock& now_s, std::function<void(request_record)> done);

}  // namespace courier::bench_tool
