#include "actors/telemetry/trace.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "actors/telemetry/trace_writer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_telemetry_trace {

using namespace courier::telemetry;

namespace {

// Tracing is process-wide: each test starts from an empty, stopped recorder.
std::vector<span> drain_all() {
  std::vector<span> out;
  while (drain(out, 4096) > 0) {
  }
  return out;
}

struct clean_recorder {
  clean_recorder() {
    stop_tracing();
    drain_all();
    take_dropped();
  }
  ~clean_recorder() {
    stop_tracing();
    drain_all();
    take_dropped();
  }
};

}  // namespace

TEST_CASE("trace: nothing is recorded while tracing is off", "[telemetry]") {
  clean_recorder clean;
  { scoped_span s("scheduler", "submit", 7); }
  record(span{});
  CHECK(drain_all().empty());
  CHECK(take_dropped() == 0);
}

TEST_CASE("trace: a scoped span records its actor, message, ids, fields and duration",
          "[telemetry]") {
  clean_recorder clean;
  start_tracing(1.0, 1000);
  const std::int64_t before = now_ns();
  {
    scoped_span s("engine", "step_plan", 0, 42);
    REQUIRE(s.active());
    s->rows = 3;
    s->prefill = 17;
    s->decode = 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const std::int64_t after = now_ns();
  const auto spans = drain_all();
  REQUIRE(spans.size() == 1);
  const span& s = spans[0];
  CHECK(std::string(s.actor) == "engine");
  CHECK(std::string(s.message) == "step_plan");
  CHECK(s.step == 42);
  CHECK(s.request == 0);
  CHECK(s.rows == 3);
  CHECK(s.prefill == 17);
  CHECK(s.decode == 2);
  CHECK(s.start_ns >= before);
  CHECK(s.duration_ns >= 2'000'000);
  CHECK(s.start_ns + s.duration_ns <= after);
  CHECK(s.thread > 0);
}

TEST_CASE("trace: each thread records without locks and every span arrives", "[telemetry]") {
  clean_recorder clean;
  start_tracing(1.0, 1 << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 5000; ++i) {
        span s;
        s.actor = "admission";
        s.message = "token_event";
        s.request = static_cast<std::uint64_t>(t * 100000 + i + 1);
        record(s);
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto spans = drain_all();
  REQUIRE(spans.size() == 20000);
  std::set<std::uint64_t> ids;
  std::set<std::uint32_t> tids;
  for (const span& s : spans) {
    ids.insert(s.request);
    tids.insert(s.thread);
  }
  CHECK(ids.size() == 20000);
  CHECK(tids.size() == 4);
}

TEST_CASE("trace: sampling keeps all or none of a request's spans and every step span",
          "[telemetry]") {
  clean_recorder clean;
  start_tracing(0.25, 1 << 20);
  for (std::uint64_t req = 1; req <= 4000; ++req) {
    for (int k = 0; k < 3; ++k) {
      span s;
      s.actor = "scheduler";
      s.message = "row";
      s.request = req;
      record(s);
    }
  }
  for (std::uint64_t step = 1; step <= 100; ++step) {
    span s;
    s.actor = "engine";
    s.message = "step_plan";
    s.step = step;
    record(s);
  }
  std::map<std::uint64_t, int> per_request;
  int steps = 0;
  for (const span& s : drain_all()) {
    if (s.request) {
      ++per_request[s.request];
    } else {
      ++steps;
    }
  }
  CHECK(steps == 100);
  for (const auto& [req, n] : per_request) CHECK(n == 3);
  // About a quarter of 4000 ids (binomial: sd ~ 27).
  CHECK(per_request.size() > 850);
  CHECK(per_request.size() < 1150);
}

TEST_CASE("trace: spans beyond the buffer bound are dropped and counted, never blocking",
          "[telemetry]") {
  clean_recorder clean;
  start_tracing(1.0, 100);
  for (int i = 0; i < 1000; ++i) record(span{0, 0, 0, 1, "engine", "forward"});
  const auto spans = drain_all();
  CHECK(spans.size() >= 100);
  CHECK(spans.size() < 1000);
  CHECK(spans.size() + take_dropped() == 1000);
}

TEST_CASE("trace: the writer writes the header and one JSON object per span", "[telemetry]") {
  const std::string path = "/tmp/courier_trace_writer_test.jsonl";
  {
    trace_writer w(path, 0.5, "tiny");
    span a{100, 20, 7, 0, "scheduler", "submit"};
    a.thread = 3;
    span b{130, 5, 0, 9, "engine", "step_plan"};
    b.thread = 4;
    b.rows = 2;
    b.prefill = 10;
    b.decode = 1;
    w.write({a, b});
    w.write_dropped(5);
  }
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["format"] == "courier-trace");
  CHECK(lines[0]["version"] == 1);
  CHECK(lines[0]["sample"] == 0.5);
  CHECK(lines[0]["model"] == "tiny");
  CHECK(lines[1] == nlohmann::json{{"actor", "scheduler"}, {"msg", "submit"}, {"ts", 100},
                                   {"dur", 20}, {"tid", 3}, {"req", 7}});
  CHECK(lines[2] == nlohmann::json{{"actor", "engine"}, {"msg", "step_plan"}, {"ts", 130},
                                   {"dur", 5}, {"tid", 4}, {"step", 9}, {"rows", 2},
                                   {"prefill", 10}, {"decode", 1}});
  CHECK(lines[3] == nlohmann::json{{"dropped", 5}});
  std::remove(path.c_str());
}

TEST_CASE("trace: a trace path that cannot be written names the config key", "[telemetry]") {
  try {
    trace_writer w("/nonexistent-dir/x.trace", 1.0, "m");
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("telemetry.trace.path") &&
                             Catch::Contains("/nonexistent-dir/x.trace"));
  }
}

}  // namespace courier_test_actors_telemetry_trace
