#pragma once
// Synthetic actor traces for the courier-trace tests: a small serving run built span by span
// from a table of request plans, so that every expected number (queue, prefill and decode
// times, step sizes) is known by construction rather than taken from the tool.
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace courier::test::trace {

constexpr std::int64_t us = 1000;                // ns per microsecond
constexpr std::int64_t base_ns = 5'000'000'000;  // the steady clock at the first span

struct span_spec {
  std::string actor;
  std::string msg;
  std::int64_t ts_ns = 0;  // absolute
  std::int64_t dur_ns = 0;
  std::uint32_t tid = 0;
  std::vector<std::pair<std::string, std::int64_t>> fields;

  std::string json_line() const {
    nlohmann::json j = {
        {"actor", actor}, {"msg", msg}, {"ts", ts_ns}, {"dur", dur_ns}, {"tid", tid}};
    for (const auto& [k, v] : fields) j[k] = v;
    return j.dump();
  }
};

inline const std::string header_line =
    R"({"format":"courier-trace","version":1,"clock":"steady","unit":"ns","sample":1.0,)"
    R"("model":"tiny-qwen3"})";

// The scenario's timing, in microseconds from base_ns:
//   step k's plan is sent at plan_sent(k) (the ts of its rows); the engine's step_plan runs
//   from plan_sent(k)+10 for step_dur(k); the step "ends" (for the phases) at
//   plan_sent(k) + step_dur(k); the scheduler handles the result at result_at(k) for 30 us.
inline std::int64_t plan_sent_us(int k) {
  return 1000 + 2000 * k;
}
inline std::int64_t step_dur_us(int k) {
  return 1500 + 50 * k;
}
inline std::int64_t result_at_us(int k) {
  return plan_sent_us(k) + 10 + step_dur_us(k) + 20;
}

struct request_plan {
  std::int64_t req;
  std::int64_t submit_us;
  std::vector<std::pair<int, std::uint32_t>> prefill;  // (step, tokens)
  std::vector<int> decode_steps;
  std::int64_t finish_after_result_us;  // finish at result_at(last step) + this; < 0: never
};

// Five requests: 1-3 complete, 4 cancelled in the queue, 5 still decoding when the trace ends.
inline std::vector<request_plan> request_plans() {
  return {
      {1, 40, {{0, 512}, {1, 488}}, {2, 3, 4, 5}, 10},
      {2, 140, {{1, 300}}, {2, 3}, 10},
      {3, 240, {{2, 256}, {3, 256}}, {4, 5, 6, 7}, 15},
      {4, 260, {}, {}, -1},
      {5, 400, {{4, 64}}, {5, 6, 7}, -1},
  };
}
constexpr int num_steps = 8;

struct step_size {
  std::uint32_t rows = 0, prefill = 0, decode = 0;
};

// All spans of the scenario, unsorted. Threads: 1 admission + telemetry, 2 scheduler,
// 3 engine, 4 admission (request 3's HTTP handler).
inline std::vector<span_spec> serving_spans() {
  std::vector<span_spec> out;
  const auto at = [](std::int64_t t_us) { return base_ns + t_us * us; };
  std::map<int, step_size> sizes;
  std::map<int, int> token_events_in_step;
  for (const request_plan& r : request_plans()) {
    const std::uint32_t http_tid = r.req == 3 ? 4 : 1;
    out.push_back(
        {"admission", "http_request", at(r.submit_us - 40), 45 * us, http_tid, {{"req", r.req}}});
    out.push_back({"scheduler", "submit", at(r.submit_us), 5 * us, 2, {{"req", r.req}}});
    if (r.prefill.empty()) {
      out.push_back({"scheduler", "cancel", at(300), 4 * us, 2, {{"req", r.req}}});
      continue;
    }
    for (const auto& [k, tokens] : r.prefill) {
      out.push_back({"scheduler",
                     "row",
                     at(plan_sent_us(k)),
                     0,
                     2,
                     {{"req", r.req}, {"step", k}, {"prefill", tokens}}});
      ++sizes[k].rows;
      sizes[k].prefill += tokens;
    }
    for (int k : r.decode_steps) {
      out.push_back({"scheduler",
                     "row",
                     at(plan_sent_us(k)),
                     0,
                     2,
                     {{"req", r.req}, {"step", k}, {"decode", 1}}});
      ++sizes[k].rows;
      ++sizes[k].decode;
      const int i = token_events_in_step[k]++;
      out.push_back({"admission",
                     "token_event",
                     at(result_at_us(k) + 40 + 4 * i),
                     3 * us,
                     1,
                     {{"req", r.req}}});
    }
    if (r.finish_after_result_us >= 0) {
      const int last = r.decode_steps.back();
      const std::int64_t fin = result_at_us(last) + r.finish_after_result_us;
      out.push_back({"scheduler", "finish", at(fin), 0, 2, {{"req", r.req}}});
      out.push_back({"admission", "finish", at(fin + 60), 5 * us, 1, {{"req", r.req}}});
    }
  }
  for (int k = 0; k < num_steps; ++k) {
    const step_size s = sizes[k];
    const std::vector<std::pair<std::string, std::int64_t>> f = {
        {"step", k}, {"rows", s.rows}, {"prefill", s.prefill}, {"decode", s.decode}};
    const std::int64_t start = plan_sent_us(k) + 10, dur = step_dur_us(k);
    out.push_back({"scheduler", "plan", at(plan_sent_us(k) - 60), 50 * us, 2, f});
    out.push_back({"engine", "step_plan", at(start), dur * us, 3, f});
    out.push_back({"engine", "forward", at(start + 10), (dur - 400) * us, 3, {{"step", k}}});
    out.push_back({"engine", "sample", at(start + dur - 350), 300 * us, 3, {{"step", k}}});
    out.push_back({"scheduler", "step_result", at(result_at_us(k)), 30 * us, 2, f});
  }
  for (int j = 0; j < 5; ++j) {
    out.push_back({"telemetry", "report", at(500 + 4000 * j), 20 * us, 1, {}});
    out.push_back({"telemetry", "scrape", at(505 + 4000 * j), 10 * us, 1, {}});
  }
  return out;
}

// The file text: header, the spans shuffled (buffers drain out of order), two drop records.
inline std::string serving_trace_text(unsigned seed = 7) {
  auto spans = serving_spans();
  std::mt19937 rng(seed);
  std::shuffle(spans.begin(), spans.end(), rng);
  std::string text = header_line + "\n";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    text += spans[i].json_line() + "\n";
    if (i == 10) text += "{\"dropped\":3}\n\n";  // and a blank line
    if (i == 20) text += "{\"dropped\":2}\n";
    if (i == 15) text += "{\"req\":2,\"request_id\":\"agent-run-2\"}\n";  // request 2's HTTP id
  }
  return text;
}

// A fresh directory under the system temp dir, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("courier_trace_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  std::string file(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace courier::test::trace
