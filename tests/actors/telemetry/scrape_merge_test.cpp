// Merging replicas' Prometheus expositions: every sample keeps its value and labels and gains its
// replica's; each family's HELP and TYPE appear once, its samples all after them.
#include "actors/telemetry/scrape_merge.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "tests/support/prometheus_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_telemetry_scrape_merge {

using namespace courier;

const char* const replica_a =
    "# HELP courier:num_requests_running Requests in the running batch.\n"
    "# TYPE courier:num_requests_running gauge\n"
    "courier:num_requests_running{model_name=\"m\"} 2\n"
    "# HELP courier:time_to_first_token_seconds TTFT.\n"
    "# TYPE courier:time_to_first_token_seconds histogram\n"
    "courier:time_to_first_token_seconds_bucket{le=\"0.1\"} 3\n"
    "courier:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n"
    "courier:time_to_first_token_seconds_sum 0.5\n"
    "courier:time_to_first_token_seconds_count 4\n";

const char* const replica_b =
    "# HELP courier:time_to_first_token_seconds TTFT.\n"
    "# TYPE courier:time_to_first_token_seconds histogram\n"
    "courier:time_to_first_token_seconds_bucket{le=\"0.1\"} 1\n"
    "courier:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\n"
    "courier:time_to_first_token_seconds_sum 0.05\n"
    "courier:time_to_first_token_seconds_count 1\n"
    "# HELP courier:num_requests_running Requests in the running batch.\n"
    "# TYPE courier:num_requests_running gauge\n"
    "courier:num_requests_running{model_name=\"m\"} 5\n"
    "courier:num_requests_running{} 7\n";

TEST_CASE("scrape merge: replicas' samples keep their values and gain their replica label",
          "[telemetry]") {
  const std::string merged = telemetry::merge_scrapes(
      {{"replica=\"10.0.0.1:7000\"", replica_a}, {"replica=\"10.0.0.2:7000\"", replica_b}});
  const auto s = test::parse_prometheus(merged);
  CHECK(test::prom_value(s, "courier:num_requests_running",
                         {{"replica", "10.0.0.1:7000"}, {"model_name", "m"}}) == 2);
  CHECK(test::prom_value(s, "courier:num_requests_running",
                         {{"replica", "10.0.0.2:7000"}, {"model_name", "m"}}) == 5);
  bool bare = false;  // `{} 7`: the replica's label alone
  for (const auto& x : s) {
    if (x.name == "courier:num_requests_running" && x.labels.size() == 1 &&
        x.labels.at("replica") == "10.0.0.2:7000") {
      bare = x.value == 7;
    }
  }
  CHECK(bare);
  CHECK(test::prom_value(s, "courier:time_to_first_token_seconds_bucket",
                         {{"replica", "10.0.0.2:7000"}, {"le", "+Inf"}}) == 1);
  CHECK(test::prom_value(s, "courier:time_to_first_token_seconds_count",
                         {{"replica", "10.0.0.1:7000"}}) == 4);
  CHECK(s.size() == 11);  // every sample of both
  // Each family's comments once, and all its samples between its TYPE and the next family.
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = merged.find(needle); at != std::string::npos;
         at = merged.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  CHECK(count("# TYPE courier:num_requests_running gauge") == 1);
  CHECK(count("# HELP courier:time_to_first_token_seconds") == 1);
  const std::size_t type_ttft = merged.find("# TYPE courier:time_to_first_token_seconds");
  CHECK(merged.find("courier:num_requests_running{", type_ttft) == std::string::npos);
}

TEST_CASE("scrape merge: a label goes first, into empty braces, or makes braces", "[telemetry]") {
  CHECK(telemetry::with_label("a 1", "r=\"x\"") == "a{r=\"x\"} 1");
  CHECK(telemetry::with_label("a{} 1", "r=\"x\"") == "a{r=\"x\"} 1");
  CHECK(telemetry::with_label("a{le=\"0.5\"} 1", "r=\"x\"") == "a{r=\"x\",le=\"0.5\"} 1");
  CHECK(telemetry::with_label("a{le=\"0.5\"} 1", "") == "a{le=\"0.5\"} 1");
}

}  // namespace courier_test_actors_telemetry_scrape_merge
