// A traced run of 50 concurrent HTTP requests: every actor's spans reach the trace file, and
// each request's spans tell its whole story (arrival, submit, every step it was in, finish).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/http_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_trace {

using namespace courier;
using nlohmann::json;

namespace {

struct request_trace {
  int http = 0, submit = 0, sched_finish = 0, admission_finish = 0, token_events = 0;
  int decode_rows = 0, prefill_tokens = 0;
  std::set<std::uint64_t> steps;
};

// Sends n completions at once with curl (prompt i has 10 + i tokens, 4 tokens each).
void send_concurrently(const test::server_fixture& s, int n, const std::string& dir) {
  std::string script = "set -e; cd " + dir + "; ";
  for (int i = 0; i < n; ++i) {
    std::vector<int> prompt;
    for (int t = 0; t < 10 + i; ++t) prompt.push_back(7 + (i * 31 + t * 17) % 1900);
    const json body = {{"model", "tiny-llama3"}, {"prompt", prompt}, {"max_tokens", 4},
                       {"ignore_eos", true}};
    std::ofstream(dir + "/b" + std::to_string(i)) << body.dump();
    // The even ones name themselves (X-Request-Id); the odd ones get an id made by the server.
    const std::string named = i % 2 == 0 ? " -H 'X-Request-Id: run-" + std::to_string(i) + "'" : "";
    script += "curl -s --max-time 120 -o r" + std::to_string(i) + named +
              " -H 'content-type: application/json' --data-binary @b" + std::to_string(i) + " '" +
              s.url("/v1/completions") + "' & ";
  }
  script += "wait";
  REQUIRE(test::run_command("bash -c \"" + script + "\"").status == 0);
}

}  // namespace

TEST_CASE("trace: a traced run of 50 requests records every actor and each request's story",
          "[integration][telemetry]") {
  const std::string dir = "/tmp/courier_trace_run_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/run.trace";
  auto cfg = test::sim_config("tiny-llama3");
  cfg.model.max_model_len = 512;
  cfg.telemetry.trace.path = path;
  const int n = 50;
  {
    test::server_fixture s(cfg);
    send_concurrently(s, n, dir);
    for (int i = 0; i < n; ++i) {
      std::ifstream in(dir + "/r" + std::to_string(i));
      const json r = json::parse(in);
      REQUIRE(r["usage"]["completion_tokens"] == 4);
    }
  }  // the runtime's end drains the last spans

  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  const json header = json::parse(line);
  CHECK(header["format"] == "courier-trace");
  std::set<std::string> actors;
  std::map<std::uint64_t, request_trace> reqs;
  std::set<std::uint64_t> engine_steps;
  std::map<std::uint64_t, std::string> http_ids;  // the requests' x-request-id
  while (std::getline(in, line)) {
    const json j = json::parse(line);
    if (j.contains("dropped")) FAIL("spans were dropped");
    if (j.contains("request_id")) {
      CHECK(http_ids.emplace(j["req"].get<std::uint64_t>(), j["request_id"]).second);
      continue;
    }
    const std::string actor = j["actor"], m = j["msg"];
    actors.insert(actor);
    CHECK(j["dur"].get<std::int64_t>() >= 0);
    if (actor == "engine" && m == "step_plan") engine_steps.insert(j["step"].get<std::uint64_t>());
    if (!j.contains("req")) continue;
    request_trace& r = reqs[j["req"].get<std::uint64_t>()];
    if (actor == "admission" && m == "http_request") ++r.http;
    if (actor == "admission" && m == "token_event") ++r.token_events;
    if (actor == "admission" && m == "finish") ++r.admission_finish;
    if (actor == "scheduler" && m == "submit") ++r.submit;
    if (actor == "scheduler" && m == "finish") ++r.sched_finish;
    if (actor == "scheduler" && m == "row") {
      r.steps.insert(j["step"].get<std::uint64_t>());
      r.decode_rows += j.value("decode", 0);
      r.prefill_tokens += j.value("prefill", 0);
    }
  }
  CHECK(actors == std::set<std::string>{"admission", "scheduler", "engine", "telemetry"});
  REQUIRE(reqs.size() == n);
  // Ids follow arrival order, so compare the prompts prefilled as a set: 10..59 tokens, once.
  std::multiset<int> prefilled, sent;
  for (const auto& [id, r] : reqs) prefilled.insert(r.prefill_tokens);
  for (int i = 0; i < n; ++i) sent.insert(10 + i);
  CHECK(prefilled == sent);
  for (const auto& [id, r] : reqs) {
    INFO("request " << id);
    CHECK(r.http == 1);
    CHECK(r.submit == 1);
    CHECK(r.sched_finish == 1);
    CHECK(r.admission_finish == 1);
    CHECK(r.token_events >= 1);
    CHECK(r.decode_rows == 3);  // tokens 2-4; the first comes from the prefill's last chunk
    for (std::uint64_t step : r.steps) CHECK(engine_steps.count(step) == 1);
    // Request i prefilled 10 + i tokens; its trace names it by its HTTP id.
    const int i = r.prefill_tokens - 10;
    REQUIRE(http_ids.count(id) == 1);
    if (i % 2 == 0) {
      CHECK(http_ids[id] == "run-" + std::to_string(i));
    } else {
      CHECK(http_ids[id].rfind("req_", 0) == 0);
    }
  }
  CHECK(http_ids.size() == reqs.size());

  // courier-trace reads the real file: the summary covers the four actors, the Chrome export is
  // valid JSON whose spans nest on each thread, and one request's timeline has its submit, each
  // of its steps and its finish.
  const std::string tool = COURIER_TRACE_BINARY;
  const auto summary = test::run_command(tool + " " + path + " summary");
  REQUIRE(summary.status == 0);
  for (const char* actor : {"admission", "scheduler", "engine", "telemetry"}) {
    CHECK(summary.out.find(std::string("  ") + actor + " ") != std::string::npos);
  }
  CHECK(summary.out.find("complete 50") != std::string::npos);

  REQUIRE(test::run_command(tool + " " + path + " export --chrome " + dir + "/out.json").status ==
          0);
  std::ifstream chrome_in(dir + "/out.json");
  const json chrome = json::parse(chrome_in);
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  for (const json& e : chrome["traceEvents"]) {
    if (e["ph"] == "X") {
      by_tid[e["tid"].get<int>()].push_back({e["ts"].get<double>(),
                                             e["ts"].get<double>() + e["dur"].get<double>()});
    }
  }
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second > b.second);
    });
    std::vector<double> open_ends;  // a stack of enclosing spans' ends
    for (const auto& [begin, end] : spans) {
      while (!open_ends.empty() && open_ends.back() <= begin) open_ends.pop_back();
      if (!open_ends.empty()) {
        INFO("thread " << tid << " span at " << begin);
        REQUIRE(end <= open_ends.back() + 1e-9);  // inside its parent, or it would overlap
      }
      open_ends.push_back(end);
    }
  }

  const std::uint64_t id = reqs.begin()->first;
  const auto timeline = test::run_command(tool + " " + path + " request " + std::to_string(id));
  REQUIRE(timeline.status == 0);
  CHECK(timeline.out.find("scheduler  submit") != std::string::npos);
  CHECK(timeline.out.find("scheduler  finish") != std::string::npos);
  for (std::uint64_t step : reqs.begin()->second.steps) {
    INFO("step " << step);
    CHECK(timeline.out.find("engine     step_plan") != std::string::npos);
    CHECK(timeline.out.find("step=" + std::to_string(step) + " ") != std::string::npos);
  }
  // The same, found by the id the client sent.
  const auto by_http_id = test::run_command(tool + " " + path + " request run-0");
  REQUIRE(by_http_id.status == 0);
  CHECK(by_http_id.out.find("(x-request-id run-0) in") != std::string::npos);
  bool prefilled_10 = false;  // request 0's prompt: its row prefilled 10 tokens
  std::istringstream timeline_lines(by_http_id.out);
  for (std::string l; std::getline(timeline_lines, l);) {
    if (l.find("scheduler  row") == std::string::npos) continue;
    const std::size_t at = l.find("prefill=");
    prefilled_10 = prefilled_10 || (at != std::string::npos && std::stoi(l.substr(at + 8)) == 10);
  }
  CHECK(prefilled_10);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: spans are written every telemetry.trace.flush_ms, and past "
          "telemetry.trace.buffer_spans they are dropped and counted",
          "[integration][telemetry]") {
  const std::string dir = "/tmp/courier_trace_keys_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto lines_of = [](const std::string& path) {
    std::ifstream in(path);
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) {
      if (in.eof()) break;  // no newline yet: a line the server is still writing
      lines.push_back(json::parse(line));
    }
    return lines;
  };
  auto cfg = test::sim_config("tiny-llama3");
  cfg.model.max_model_len = 512;
  {  // every 20 ms: the spans reach the file while the server runs
    cfg.telemetry.trace.path = dir + "/often.trace";
    cfg.telemetry.trace.flush_ms = 20;
    test::server_fixture s(cfg);
    send_concurrently(s, 10, dir);
    for (int i = 0; i < 500 && lines_of(cfg.telemetry.trace.path).size() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(lines_of(cfg.telemetry.trace.path).size() > 1);
  }
  // Every minute, and 1024 spans buffered at most: nothing is written while it runs; 100
  // requests make more spans than that, and the rest are counted as dropped at the end.
  cfg.telemetry.trace.path = dir + "/full.trace";
  cfg.telemetry.trace.flush_ms = 60000;
  cfg.telemetry.trace.buffer_spans = 1024;
  {
    test::server_fixture s(cfg);
    send_concurrently(s, 50, dir);
    send_concurrently(s, 50, dir);
    CHECK(lines_of(cfg.telemetry.trace.path).size() <= 1);  // no span (the header, if flushed)
  }
  const std::vector<json> lines = lines_of(cfg.telemetry.trace.path);
  std::int64_t spans = 0, dropped = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].contains("dropped")) {
      dropped += lines[i]["dropped"].get<std::int64_t>();
    } else if (!lines[i].contains("request_id")) {  // a label is not a span
      ++spans;
    }
  }
  CHECK(dropped > 0);
  CHECK(spans <= 1024 + 64);  // the buffer's spans, and those of the end (the last drain's)
  std::filesystem::remove_all(dir);
}

}  // namespace courier_test_integration_trace
