#include "actors/telemetry/metrics.hpp"

#include <catch2/catch.hpp>

#include "actors/scheduler/scheduler_report.hpp"
#include "tests/support/prometheus_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_telemetry_metrics {

using namespace courier;
using test::prom_value;

namespace {

msg::request_summary finished(msg::finish_reason why, int prompt, int gen) {
  msg::request_summary q;
  q.finish = why;
  q.prompt_tokens = prompt;
  q.generation_tokens = gen;
  q.e2e_s = 0.5;
  q.queue_s = 0.01;
  q.ttft_s = 0.05;
  q.prefill_s = 0.04;
  q.decode_s = 0.45;
  for (int i = 1; i < gen; ++i) q.inter_token_s.push_back(0.02f);
  return q;
}

}  // namespace

TEST_CASE("metrics: counters add each report's increments and never go down", "[telemetry]") {
  telemetry::server_metrics m("tiny");
  msg::telemetry_report a;
  a.prompt_tokens = 10;
  a.generated_tokens = 4;
  a.prefix_queries = 10;
  a.prefix_hits = 0;
  a.num_preemptions = 1;
  m.apply(a);
  msg::telemetry_report b;
  b.prompt_tokens = 5;
  b.generated_tokens = 6;
  b.prefix_queries = 5;
  b.prefix_hits = 4;
  m.apply(b);
  m.apply(msg::telemetry_report{});  // an empty report changes no counter
  const auto s = test::parse_prometheus(m.render());
  CHECK(prom_value(s, "courier:prompt_tokens_total", {{"model_name", "tiny"}}) == 15);
  CHECK(prom_value(s, "courier:generation_tokens_total") == 10);
  CHECK(prom_value(s, "courier:prefix_cache_queries_total") == 15);
  CHECK(prom_value(s, "courier:prefix_cache_hits_total") == 4);
  CHECK(prom_value(s, "courier:num_preemptions_total") == 1);
}

TEST_CASE("metrics: every counter of the scheduler's one list is diffed into the report and "
          "exported under its metric and label",
          "[telemetry]") {
  // Each counter gets its own value (its place in the list, times 3), twice over: the report's
  // increments and the exported totals must follow, each under its own series.
  actors::scheduler_report rep;
  msg::scheduler_stats stats;
  std::uint64_t k = 0;
#define COURIER_SET(field, metric, label, help) stats.field = 3 * ++k;
  COURIER_SCHEDULER_COUNTERS(COURIER_SET)
#undef COURIER_SET
  rep.changed();
  std::optional<msg::telemetry_report> r = rep.take(stats, 0, 0, 0.0);
  REQUIRE(r);
  telemetry::server_metrics m("tiny");
  m.apply(*r);
  k = 0;
#define COURIER_MORE(field, metric, label, help) stats.field += ++k;
  COURIER_SCHEDULER_COUNTERS(COURIER_MORE)
#undef COURIER_MORE
  rep.changed();
  r = rep.take(stats, 0, 0, 0.0);
  REQUIRE(r);
  k = 0;
#define COURIER_CHECK_DIFF(field, metric, label, help) \
  CHECK(r->field == ++k);                              \
  CHECK(stats.field == 4 * k);
  COURIER_SCHEDULER_COUNTERS(COURIER_CHECK_DIFF)
#undef COURIER_CHECK_DIFF
  m.apply(*r);
  const auto samples = test::parse_prometheus(m.render());
  k = 0;
  auto labels_of = [](const std::string& label) {
    std::map<std::string, std::string> l{{"model_name", "tiny"}};
    const std::size_t eq = label.find('=');
    if (eq != std::string::npos) l[label.substr(0, eq)] = label.substr(eq + 1);
    return l;
  };
#define COURIER_CHECK_EXPORT(field, metric, label, help)                          \
  {                                                                               \
    INFO(#field << " as " << metric << "{" << label << "}");                      \
    CHECK(prom_value(samples, metric, labels_of(label)) == static_cast<double>(4 * ++k)); \
  }
  COURIER_SCHEDULER_COUNTERS(COURIER_CHECK_EXPORT)
#undef COURIER_CHECK_EXPORT
  CHECK(k > 20);  // the list expanded; each counter added to it is checked above
}

TEST_CASE("metrics: prompt-lookup rows, proposed and accepted tokens, each by source",
          "[telemetry]") {
  telemetry::server_metrics m("tiny");
  msg::telemetry_report a;
  a.spec_drafts = 7;  // 5 rows from the request's own tokens, 2 from the shared scope
  a.spec_drafts_shared = 2;
  a.spec_draft_tokens_own = 15;
  a.spec_draft_tokens_shared = 8;
  a.spec_accepted_own = 9;
  a.spec_accepted_shared = 3;
  m.apply(a);
  m.apply(a);
  const auto s = test::parse_prometheus(m.render());
  CHECK(prom_value(s, "courier:spec_decode_num_drafts_total", {{"source", "own"}}) == 10);
  CHECK(prom_value(s, "courier:spec_decode_num_drafts_total", {{"source", "shared"}}) == 4);
  CHECK(prom_value(s, "courier:spec_decode_num_draft_tokens_total", {{"source", "own"}}) == 30);
  CHECK(prom_value(s, "courier:spec_decode_num_draft_tokens_total", {{"source", "shared"}}) ==
        16);
  CHECK(prom_value(s, "courier:spec_decode_num_accepted_tokens_total", {{"source", "own"}}) ==
        18);
  CHECK(prom_value(s, "courier:spec_decode_num_accepted_tokens_total", {{"source", "shared"}}) ==
        6);
}

TEST_CASE("metrics: gauges hold the latest report's values", "[telemetry]") {
  telemetry::server_metrics m("tiny");
  msg::telemetry_report a;
  a.num_running = 7;
  a.num_waiting = 3;
  a.kv_usage = 0.75;
  a.state_usage = 0.5;
  m.apply(a);
  CHECK(prom_value(test::parse_prometheus(m.render()), "courier:mamba_state_usage_perc") == 0.5);
  msg::telemetry_report b;
  b.num_running = 2;
  m.apply(b);
  const auto s = test::parse_prometheus(m.render());
  CHECK(prom_value(s, "courier:num_requests_running") == 2);
  CHECK(prom_value(s, "courier:num_requests_waiting") == 0);
  CHECK(prom_value(s, "courier:kv_cache_usage_perc") == 0);
  CHECK(prom_value(s, "courier:mamba_state_usage_perc") == 0);
}

TEST_CASE("metrics: a hybrid's snapshot hits by kind, misses, recomputed tokens and row use",
          "[telemetry]") {
  telemetry::server_metrics m("tiny");
  msg::telemetry_report a;
  a.snapshot_hits_exact = 2;
  a.snapshot_hits_tail = 5;
  a.snapshot_misses = 7;
  a.snapshot_hits_spilled = 3;
  a.snapshot_recomputed_tokens = 64;
  a.snapshot_usage = 0.5;
  m.apply(a);
  msg::telemetry_report b;
  b.snapshot_hits_tail = 1;
  b.snapshot_hits_branch = 4;
  b.snapshot_usage = 0.75;
  m.apply(b);
  const auto s = test::parse_prometheus(m.render());
  CHECK(prom_value(s, "courier:ssm_snapshot_hits_total", {{"kind", "exact"}}) == 2);
  CHECK(prom_value(s, "courier:ssm_snapshot_hits_total", {{"kind", "intermediate"}}) == 0);
  CHECK(prom_value(s, "courier:ssm_snapshot_hits_total", {{"kind", "branch"}}) == 4);
  CHECK(prom_value(s, "courier:ssm_snapshot_hits_total", {{"kind", "tail"}}) == 6);
  CHECK(prom_value(s, "courier:ssm_snapshot_misses_total") == 7);
  CHECK(prom_value(s, "courier:ssm_snapshot_spilled_hits_total") == 3);
  CHECK(prom_value(s, "courier:ssm_snapshot_recomputed_tokens_total") == 64);
  CHECK(prom_value(s, "courier:ssm_snapshot_usage_perc") == 0.75);
}

TEST_CASE("metrics: ended requests fill the latency histograms and the reason counters",
          "[telemetry]") {
  telemetry::server_metrics m("tiny");
  msg::telemetry_report r;
  r.finished.push_back(finished(msg::finish_reason::stop, 10, 5));
  r.finished.push_back(finished(msg::finish_reason::length, 20, 3));
  auto cancelled = finished(msg::finish_reason::cancelled, 7, 0);
  cancelled.ttft_s = cancelled.prefill_s = cancelled.decode_s = -1;  // never got a token
  r.finished.push_back(cancelled);
  msg::request_summary failed;
  failed.finish = msg::finish_reason::error;
  failed.error = msg::error_code::too_long;
  failed.prompt_tokens = 900;
  r.finished.push_back(failed);
  msg::step_summary st;
  st.num_rows = 3;
  st.num_prefill_tokens = 30;
  st.num_decode_rows = 2;
  st.duration_s = 0.003;
  r.steps = {st, st};
  m.apply(r);
  const auto s = test::parse_prometheus(m.render());
  CHECK(prom_value(s, "courier:request_success_total", {{"finished_reason", "stop"}}) == 1);
  CHECK(prom_value(s, "courier:request_success_total", {{"finished_reason", "length"}}) == 1);
  CHECK(prom_value(s, "courier:request_success_total", {{"finished_reason", "abort"}}) == 1);
  CHECK(prom_value(s, "courier:request_success_total", {{"finished_reason", "error"}}) == 1);
  CHECK(prom_value(s, "courier:request_failure_total", {{"error", "too_long"}}) == 1);
  CHECK(prom_value(s, "courier:e2e_request_latency_seconds_count") == 4);
  CHECK(prom_value(s, "courier:time_to_first_token_seconds_count") == 2);
  CHECK(prom_value(s, "courier:time_to_first_token_seconds_sum") == Approx(0.1));
  // 0.05 falls in the le="0.06" bucket, not in le="0.04" (buckets are cumulative).
  CHECK(prom_value(s, "courier:time_to_first_token_seconds_bucket", {{"le", "0.04"}}) == 0);
  CHECK(prom_value(s, "courier:time_to_first_token_seconds_bucket", {{"le", "0.06"}}) == 2);
  CHECK(prom_value(s, "courier:inter_token_latency_seconds_count") == 4 + 2);
  CHECK(prom_value(s, "courier:request_queue_time_seconds_count") == 3);
  CHECK(prom_value(s, "courier:request_prompt_tokens_sum") == 10 + 20 + 7 + 900);
  CHECK(prom_value(s, "courier:request_generation_tokens_sum") == 8);
  CHECK(prom_value(s, "courier:iteration_tokens_total_sum") == 64);
  CHECK(prom_value(s, "courier:step_batch_size_sum") == 6);
  CHECK(prom_value(s, "courier:step_duration_seconds_count") == 2);
}

TEST_CASE("metrics: the text names the vLLM metric set with the courier prefix", "[telemetry]") {
  telemetry::server_metrics m("tiny");
  const std::string text = m.render();
  for (const char* name :
       {"courier:num_requests_running", "courier:num_requests_waiting",
        "courier:kv_cache_usage_perc", "courier:mamba_state_usage_perc",
        "courier:ssm_snapshot_usage_perc", "courier:ssm_snapshot_hits_total",
        "courier:ssm_snapshot_misses_total", "courier:ssm_snapshot_recomputed_tokens_total",
        "courier:ssm_snapshot_spilled_hits_total",
        "courier:prompt_tokens_total",
        "courier:generation_tokens_total", "courier:request_success_total",
        "courier:time_to_first_token_seconds", "courier:inter_token_latency_seconds",
        "courier:e2e_request_latency_seconds", "courier:request_queue_time_seconds",
        "courier:request_prefill_time_seconds", "courier:request_decode_time_seconds",
        "courier:prefix_cache_queries_total", "courier:prefix_cache_hits_total",
        "courier:num_preemptions_total", "courier:iteration_tokens_total",
        "courier:spec_decode_num_drafts_total", "courier:spec_decode_num_draft_tokens_total",
        "courier:spec_decode_num_accepted_tokens_total"}) {
    INFO(name);
    CHECK(text.find(std::string("# TYPE ") + name + " ") != std::string::npos);
  }
  CHECK(text.find("# TYPE courier:prompt_tokens_total counter") != std::string::npos);
  CHECK(text.find("# TYPE courier:num_requests_running gauge") != std::string::npos);
  CHECK(text.find("# TYPE courier:time_to_first_token_seconds histogram") != std::string::npos);
}

TEST_CASE("metrics: ignored request fields are counted by name, bounded, and new names reported once",
          "[telemetry]") {
  telemetry::server_metrics m("tiny");
  CHECK(m.count_ignored_fields({{"reasoning_effort", "store"}}) ==
        std::vector<std::string>{"reasoning_effort", "store"});
  CHECK(m.count_ignored_fields({{"store", "verbosity"}}) == std::vector<std::string>{"verbosity"});
  // Not a plain short name: counted as other, never logged.
  CHECK(m.count_ignored_fields({{"bad\nname", std::string(65, 'x')}}).empty());
  auto s = test::parse_prometheus(m.render());
  const std::string name = "courier:request_ignored_fields_total";
  CHECK(prom_value(s, name, {{"field", "store"}}) == 2);
  CHECK(prom_value(s, name, {{"field", "reasoning_effort"}}) == 1);
  CHECK(prom_value(s, name, {{"field", "other"}}) == 2);
  // Past the bound, new names go to other: a client cannot grow the series without end.
  msg::admission_report flood;
  for (int i = 0; i < 200; ++i) flood.ignored_fields.push_back("f" + std::to_string(i));
  CHECK(m.count_ignored_fields(flood).size() ==
        telemetry::server_metrics::max_ignored_field_names - 3);
  s = test::parse_prometheus(m.render());
  std::size_t series = 0;
  for (const auto& x : s) series += x.name == name;
  CHECK(series == telemetry::server_metrics::max_ignored_field_names + 1);  // + other
}

}  // namespace courier_test_actors_telemetry_metrics
