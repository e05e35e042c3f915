// A streaming client that never reads: once server.max_stream_buffer_bytes of its stream pile
// up, the server treats it as gone, so its request is cancelled at the scheduler (which frees
// its blocks) instead of generating into memory; /metrics counts it.
#include <catch2/catch.hpp>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"
#include "tests/support/http_fixture.hpp"
#include "tests/support/prometheus_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_http_stream_overflow {

using namespace courier;
using nlohmann::json;

TEST_CASE("http api: a stream whose client never reads is cancelled past the buffer bound",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.model.max_model_len = 8192;  // a request that would run for seconds
  cfg.server.max_stream_buffer_bytes = 16 << 10;
  test::server_fixture s(cfg);
  // Top-20 logprobs make each event about 1 KB: 8000 of them are 8 MB, more than the kernel
  // buffers on the way (the server's send buffer autotunes up to net.ipv4.tcp_wmem's 4 MB;
  // the client's receive window is tiny) plus the server's bound.
  const json body = {{"model", "tiny-llama3"}, {"prompt", {1, 2, 3}}, {"max_tokens", 8000},
                     {"ignore_eos", true}, {"stream", true}, {"logprobs", 20}};
  http::test::raw_client c(s.server->port(), std::chrono::seconds(5), 4096);
  c.write(http::test::post("/v1/completions", body.dump(), "Content-Type: application/json\r\n"));

  msg::scheduler_stats st;
  // Bounded, so that a bug fails the test instead of hanging it; generous, for sanitizer
  // builds (a few hundred tokens a second there, ~4 MB to fill first).
  for (int i = 0; i < 2400; ++i) {
    st = s.stats();
    if (st.num_cancelled + st.num_finished >= 1 && st.num_running == 0 && st.num_waiting == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(st.num_cancelled == 1);  // not run to its end into the server's memory
  CHECK(st.num_finished == 0);
  CHECK(st.num_running == 0);
  CHECK(st.generated_tokens < 8000);
  CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);

  const auto m = test::curl(s.url("/metrics"));
  REQUIRE(m.status == 200);
  const auto samples = test::parse_prometheus(m.body);
  CHECK(test::prom_value(samples, "courier:stream_buffer_overflows_total",
                         {{"model_name", "tiny-llama3"}}) == 1);
}

}  // namespace courier_test_integration_http_stream_overflow
