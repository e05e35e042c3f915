// /metrics end to end: after requests with known token counts, the scraped values equal what was
// sent (counters, histogram counts and sums, gauges back to idle).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include <chrono>
#include <random>
#include <thread>

#include "tests/support/http_fixture.hpp"
#include "tests/support/prometheus_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_metrics {

using namespace courier;
using nlohmann::json;

namespace {

config::server_config llama_config() {
  auto c = test::sim_config("tiny-llama3");
  c.model.max_model_len = 512;
  return c;
}

std::vector<test::prom_sample> scrape_http(const test::server_fixture& s) {
  const auto r = test::curl(s.url("/metrics"));
  REQUIRE(r.status == 200);
  return test::parse_prometheus(r.body);
}

std::vector<test::prom_sample> scrape(actors::runtime& rt) {
  caf::scoped_actor self{rt.system()};
  std::string text;
  self->request(rt.telemetry(), caf::infinite, msg::scrape_atom_v)
      .receive([&](std::string& t) { text = std::move(t); }, [](caf::error&) {});
  return test::parse_prometheus(text);
}

// A 160-token document, then `others` prompts of 300 tokens that push it out of the device's
// blocks, then a question about it; one at a time, each after the disk tier (if any) settles
// (its blocks written before the next request evicts them from host memory).
void ask_evicted_document(test::harness& h, int others) {
  std::vector<msg::token_id> doc;
  for (int t = 0; t < 160; ++t) doc.push_back(static_cast<msg::token_id>(100 + t));
  msg::request_id id = 1;
  auto ask = [&](std::vector<msg::token_id> prompt) {
    msg::submit s;
    s.id = id++;
    s.prompt = std::move(prompt);
    s.max_tokens = 2;
    s.ignore_eos = true;
    h.submit(s);
    h.wait_all();
    h.settled_stats();
  };
  ask(doc);
  for (int k = 0; k < others; ++k) {
    ask(std::vector<msg::token_id>(300, static_cast<msg::token_id>(20 + k)));
  }
  doc.push_back(7);
  ask(doc);
}

}  // namespace

TEST_CASE("metrics: after requests with known token counts /metrics equals what was sent",
          "[integration][telemetry]") {
  test::server_fixture s(llama_config());
  std::mt19937 rng(7);
  std::uint64_t prompt_sum = 0, gen_sum = 0, itl_sum = 0;
  const int n = 12;
  for (int i = 0; i < n; ++i) {
    const int len = 5 + static_cast<int>(rng() % 56);
    const int max_tokens = 1 + static_cast<int>(rng() % 9);
    std::vector<int> prompt;
    for (int t = 0; t < len; ++t) prompt.push_back(3 + static_cast<int>(rng() % 2000));
    const json body = {{"model", "tiny-llama3"}, {"prompt", prompt}, {"max_tokens", max_tokens},
                       {"ignore_eos", true}, {"temperature", 0}};
    const auto r = test::curl(s.url("/v1/completions"), body.dump());
    REQUIRE(r.status == 200);
    REQUIRE(r.j()["usage"]["completion_tokens"] == max_tokens);
    prompt_sum += static_cast<std::uint64_t>(len);
    gen_sum += static_cast<std::uint64_t>(max_tokens);
    itl_sum += static_cast<std::uint64_t>(max_tokens - 1);  // one interval per later step
  }
  const auto m = scrape_http(s);
  const std::map<std::string, std::string> model = {{"model_name", "tiny-llama3"}};
  CHECK(test::prom_value(m, "courier:prompt_tokens_total", model) == prompt_sum);
  CHECK(test::prom_value(m, "courier:generation_tokens_total") == gen_sum);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "length"}}) == n);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "stop"}}) == 0);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "abort"}}) == 0);
  for (const char* h : {"courier:e2e_request_latency_seconds", "courier:time_to_first_token_seconds",
                        "courier:request_queue_time_seconds", "courier:request_prefill_time_seconds",
                        "courier:request_decode_time_seconds"}) {
    INFO(h);
    CHECK(test::prom_value(m, std::string(h) + "_count") == n);
    CHECK(test::prom_value(m, std::string(h) + "_bucket", {{"le", "+Inf"}}) == n);
    CHECK(test::prom_value(m, std::string(h) + "_sum") > 0);
  }
  CHECK(test::prom_value(m, "courier:inter_token_latency_seconds_count") == itl_sum);
  CHECK(test::prom_value(m, "courier:request_prompt_tokens_sum") == prompt_sum);
  CHECK(test::prom_value(m, "courier:request_generation_tokens_sum") == gen_sum);
  // Every prompt token was looked up; random prompts share no whole block.
  CHECK(test::prom_value(m, "courier:prefix_cache_queries_total") == prompt_sum);
  CHECK(test::prom_value(m, "courier:prefix_cache_hits_total") == 0);
  // Each step feeds prefill tokens and one token per decode row: the prompts once each, and
  // every generated token but each request's last.
  CHECK(test::prom_value(m, "courier:iteration_tokens_total_sum") == prompt_sum + itl_sum);
  const auto st = s.stats();
  CHECK(test::prom_value(m, "courier:iteration_tokens_total_count") == st.num_steps);
  CHECK(test::prom_value(m, "courier:step_duration_seconds_count") == st.num_steps);
  CHECK(test::prom_value(m, "courier:step_batch_size_count") == st.num_steps);
  CHECK(test::prom_value(m, "courier:num_requests_running") == 0);
  CHECK(test::prom_value(m, "courier:num_requests_waiting") == 0);
  CHECK(test::prom_value(m, "courier:kv_cache_usage_perc") == 0);
  CHECK(test::prom_value(m, "courier:num_preemptions_total") == 0);
}

TEST_CASE("metrics: prefix cache hits count only the reused tokens", "[integration][telemetry]") {
  test::server_fixture s(llama_config());
  std::vector<int> prefix;
  for (int t = 0; t < 64; ++t) prefix.push_back(100 + t);  // four blocks of 16
  std::uint64_t prompt_sum = 0, cached_sum = 0;
  for (int i = 0; i < 3; ++i) {
    std::vector<int> prompt = prefix;
    prompt.push_back(900 + i);
    const json body = {{"model", "tiny-llama3"}, {"prompt", prompt}, {"max_tokens", 2}};
    const auto r = test::curl(s.url("/v1/completions"), body.dump());
    REQUIRE(r.status == 200);
    prompt_sum += prompt.size();
    cached_sum += r.j()["usage"]["prompt_tokens_details"]["cached_tokens"].get<std::uint64_t>();
  }
  CHECK(cached_sum == 128);  // the second and third reuse 64 each
  const auto m = scrape_http(s);
  CHECK(test::prom_value(m, "courier:prefix_cache_queries_total") == prompt_sum);
  CHECK(test::prom_value(m, "courier:prefix_cache_hits_total") == cached_sum);
}

TEST_CASE("metrics: rejected and cancelled requests are counted by reason",
          "[integration][telemetry]") {
  test::harness h(llama_config());
  msg::submit too_long;
  too_long.id = 1;
  too_long.prompt.assign(600, 5);  // over max_model_len 512
  h.submit(too_long);
  msg::submit long_one;
  long_one.id = 2;
  long_one.prompt = {5, 6, 7};
  long_one.max_tokens = 400;
  long_one.ignore_eos = true;
  h.submit(long_one);
  bool cancelled = false;
  h.wait_all([&](const msg::token_event& e) {
    if (e.id == 2 && !cancelled) {
      h.cancel(2);
      cancelled = true;
    }
  });
  const auto m = scrape(h.rt());
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "error"}}) == 1);
  CHECK(test::prom_value(m, "courier:request_failure_total", {{"error", "too_long"}}) == 1);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "abort"}}) == 1);
  CHECK(test::prom_value(m, "courier:e2e_request_latency_seconds_count") == 2);
  // The rejected request was never scheduled: no queue time, no first token.
  CHECK(test::prom_value(m, "courier:request_queue_time_seconds_count") == 1);
  CHECK(test::prom_value(m, "courier:time_to_first_token_seconds_count") == 1);
  CHECK(test::prom_value(m, "courier:prompt_tokens_total") == 3);
}

namespace {

// Six requests of 20 prompt and 40 output tokens, more than 12 blocks hold at once: preemption.
void run_six_long(test::harness& h) {
  for (msg::request_id id = 1; id <= 6; ++id) {
    msg::submit s;
    s.id = id;
    s.prompt.assign(20, static_cast<msg::token_id>(10 + id));
    s.max_tokens = 40;
    s.ignore_eos = true;
    h.submit(s);
  }
  h.wait_all();
}

}  // namespace

TEST_CASE("metrics: preemptions are counted as the scheduler made them",
          "[integration][telemetry]") {
  auto c = llama_config();
  c.scheduler.num_kv_blocks = 12;
  c.scheduler.block_size = 16;
  test::harness h(c);
  run_six_long(h);
  const auto st = h.stats();
  REQUIRE(st.num_preemptions > 0);
  const auto m = scrape(h.rt());
  CHECK(test::prom_value(m, "courier:num_preemptions_total") == st.num_preemptions);
  CHECK(test::prom_value(m, "courier:generation_tokens_total") == 6 * 40);
  // Prompt tokens count once per request, not again when a preempted one is rescheduled.
  CHECK(test::prom_value(m, "courier:prompt_tokens_total") == 6 * 20);
  CHECK(test::prom_value(m, "courier:kv_preemptions_total", {{"kind", "recompute"}}) ==
        st.num_preemptions);  // no host tier
  CHECK(test::prom_value(m, "courier:kv_preemptions_total", {{"kind", "swap"}}) == 0);
}

TEST_CASE("metrics: swap preemptions and the blocks they copy each way",
          "[integration][telemetry]") {
  auto c = llama_config();
  c.scheduler.num_kv_blocks = 12;
  c.cache.host_tier_mb = 8;
  c.cache.preemption = "swap";
  test::harness h(c);
  run_six_long(h);
  const auto st = h.stats();
  REQUIRE(st.swap_outs > 0);
  const auto m = scrape(h.rt());
  CHECK(test::prom_value(m, "courier:kv_preemptions_total", {{"kind", "swap"}}) == st.swap_outs);
  CHECK(test::prom_value(m, "courier:kv_preemptions_total", {{"kind", "recompute"}}) ==
        st.recompute_preemptions);
  CHECK(test::prom_value(m, "courier:kv_swap_blocks_total", {{"direction", "out"}}) ==
        st.swapped_out_blocks);
  CHECK(test::prom_value(m, "courier:kv_swap_blocks_total", {{"direction", "in"}}) ==
        st.swapped_in_blocks);
  CHECK(st.swapped_in_blocks == st.swapped_out_blocks);
}

TEST_CASE("metrics: the host tier's prefix cache, its hits and the blocks it moves",
          "[integration][telemetry]") {
  auto c = llama_config();
  c.scheduler.num_kv_blocks = 24;
  c.cache.host_tier_mb = 16;
  test::harness h(c);
  ask_evicted_document(h, 3);  // 3 others push it out of the device's blocks
  const auto st = h.stats();
  REQUIRE(st.host_cache_hit_tokens > 0);
  const auto m = scrape(h.rt());
  CHECK(test::prom_value(m, "courier:prefix_cache_host_hits_total") == st.host_cache_hit_tokens);
  CHECK(test::prom_value(m, "courier:kv_host_tier_blocks_total", {{"direction", "out"}}) ==
        st.host_cache_spilled_blocks);
  CHECK(test::prom_value(m, "courier:kv_host_tier_blocks_total", {{"direction", "in"}}) ==
        st.host_cache_promoted_blocks);
  CHECK(test::prom_value(m, "courier:kv_host_tier_cached_blocks") == st.num_host_cached_blocks);
  REQUIRE(st.num_cached_blocks > 0);  // the device's: the document came back into them
  CHECK(test::prom_value(m, "courier:prefix_cache_blocks") == st.num_cached_blocks);
  // The host tier's hits are prefix-cache hits too.
  CHECK(test::prom_value(m, "courier:prefix_cache_hits_total") >= st.host_cache_hit_tokens);
}

TEST_CASE("metrics: a completion ended by a stop string counts as stop, not abort",
          "[integration][telemetry]") {
  auto c = test::sim_config("tiny-qwen3");  // has a tokenizer: stop strings need text
  c.model.max_model_len = 2048;
  test::server_fixture s(c);
  json body = {{"model", "tiny-qwen3"}, {"prompt", "Once upon a time"}, {"max_tokens", 16},
               {"temperature", 0}, {"ignore_eos", true}};
  const auto first = test::curl(s.url("/v1/completions"), body.dump());
  REQUIRE(first.status == 200);
  const std::string text = first.j()["choices"][0]["text"];
  // A few characters from the middle of the greedy text, cut on UTF-8 character boundaries.
  auto boundary = [&](std::size_t i) {
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
    return i;
  };
  const std::size_t from = boundary(text.size() / 2), to = boundary(from + 3);
  REQUIRE(to > from);
  REQUIRE(to < text.size());
  const std::string stop = text.substr(from, to - from);
  // The same greedy run with the stop string, and room to go on long after it (the scheduler
  // keeps generating until the request actor's word reaches it).
  body["stop"] = {stop};
  body["max_tokens"] = 1500;
  const auto stopped = test::curl(s.url("/v1/completions"), body.dump());
  REQUIRE(stopped.status == 200);
  CHECK(stopped.j()["choices"][0]["finish_reason"] == "stop");
  CHECK(stopped.j()["choices"][0]["text"] == text.substr(0, text.find(stop)));
  // The response went out when the stop string matched; the scheduler ends the request when
  // the request actor's word reaches it (its report to telemetry goes before its next answer).
  msg::scheduler_stats st;
  for (int i = 0; i < 500; ++i) {
    st = s.stats();
    if (st.num_running == 0 && st.num_waiting == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto m = scrape_http(s);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "stop"}}) == 1);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "abort"}}) == 0);
  CHECK(test::prom_value(m, "courier:request_success_total", {{"finished_reason", "length"}}) ==
        1);
  // Counted as finished, not cancelled, and every block is back (free or cached).
  CHECK(st.num_finished == 2);
  CHECK(st.num_cancelled == 0);
  CHECK(st.num_running == 0);
  CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
}

TEST_CASE("metrics: the disk tier's hits, the bytes it moves and the host tier's bytes",
          "[integration][telemetry]") {
  auto c = llama_config();
  c.scheduler.num_kv_blocks = 24;
  c.cache.host_tier_mb = 1;  // 32 blocks: the other prompts push the document out of it too
  c.cache.disk_tier_gb = 0.01;
  c.cache.disk_tier_path = (std::filesystem::temp_directory_path() /
                            ("courier-metrics-disk-" + std::to_string(::getpid())))
                               .string();
  test::harness h(c);
  ask_evicted_document(h, 6);  // 6 others push it out of the device's and the host's blocks
  const auto st = h.settled_stats();
  REQUIRE(st.disk_cache_hit_tokens > 0);
  const double block = h.rt().ready().kv_block_bytes;
  const auto m = scrape(h.rt());
  CHECK(test::prom_value(m, "courier:prefix_cache_disk_hits_total") == st.disk_cache_hit_tokens);
  CHECK(test::prom_value(m, "courier:kv_disk_tier_bytes_total", {{"direction", "write"}}) ==
        st.disk_written_blocks * block);
  CHECK(test::prom_value(m, "courier:kv_disk_tier_bytes_total", {{"direction", "read"}}) ==
        st.disk_read_blocks * block);
  CHECK(test::prom_value(m, "courier:kv_disk_tier_errors_total", {{"op", "write"}}) == 0);
  CHECK(test::prom_value(m, "courier:kv_disk_tier_errors_total", {{"op", "read"}}) == 0);
  CHECK(test::prom_value(m, "courier:kv_disk_tier_cached_blocks") == st.num_disk_cached_blocks);
  CHECK(test::prom_value(m, "courier:kv_host_tier_bytes_total", {{"direction", "out"}}) ==
        (st.host_cache_spilled_blocks + st.swapped_out_blocks) * block);
  CHECK(test::prom_value(m, "courier:kv_host_tier_bytes_total", {{"direction", "in"}}) ==
        (st.host_cache_promoted_blocks + st.swapped_in_blocks) * block);
  // The disk's hits are the host tier's and the prefix cache's too.
  CHECK(test::prom_value(m, "courier:prefix_cache_host_hits_total") >= st.disk_cache_hit_tokens);
}

}  // namespace courier_test_integration_metrics
