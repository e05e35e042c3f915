#include "tools/bench/result_json.hpp"

#include <cmath>

#include "tools/bench/report_table.hpp"

namespace courier::bench_tool {
namespace {

using json = nlohmann::json;

void add_latency(json& j, const char* name, const sample_stats& s) {
  const std::string n = name;
  j["mean_" + n + "_ms"] = s.mean;
  j["median_" + n + "_ms"] = s.median;
  j["std_" + n + "_ms"] = s.std_dev;
  for (const auto& [p, v] : s.percentiles) j["p" + percentile_word(p) + "_" + n + "_ms"] = v;
}

void add_per_request(json& j, const std::vector<request_record>& records) {
  json input_lens = json::array(), output_lens = json::array(), ttfts = json::array(),
       itls = json::array(), errors = json::array(), cached = json::array(), sends = json::array(),
       e2els = json::array(), text_lens = json::array();
  for (const request_record& r : records) {
    input_lens.push_back(r.input_tokens());
    output_lens.push_back(r.success ? r.output_tokens() : 0);
    ttfts.push_back(r.success ? r.chunk_s.front() - r.send_s : 0.0);
    json gaps = json::array();
    for (std::size_t i = 1; r.success && i < r.chunk_s.size(); ++i) {
      gaps.push_back(r.chunk_s[i] - r.chunk_s[i - 1]);
    }
    itls.push_back(std::move(gaps));
    errors.push_back(r.error);
    cached.push_back(r.cached_tokens);
    sends.push_back(r.send_s);
    e2els.push_back(r.end_s - r.send_s);
    text_lens.push_back(r.generated_bytes);
  }
  j["input_lens"] = std::move(input_lens);
  j["output_lens"] = std::move(output_lens);
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["errors"] = std::move(errors);
  j["cached_lens"] = std::move(cached);
  j["send_times"] = std::move(sends);
  j["e2els"] = std::move(e2els);
  j["generated_text_lens"] = std::move(text_lens);
}

}  // namespace

json result_json(const run_info& info, const bench_metrics& m,
                 const std::vector<request_record>& records) {
  json j;
  j["date"] = info.date;
  j["label"] = info.label;
  j["endpoint_type"] = info.backend;
  j["base_url"] = info.base_url;
  j["endpoint"] = info.endpoint;
  j["model_id"] = info.model;
  j["tokenizer_id"] = info.tokenizer.empty() ? json(nullptr) : json(info.tokenizer);
  j["dataset_name"] = info.dataset;
  j["prompt_format"] = info.prompt_format;
  j["seed"] = info.seed;
  j["num_prompts"] = info.num_prompts;
  j["request_rate"] = std::isinf(info.request_rate) ? json("inf") : json(info.request_rate);
  j["max_concurrency"] = info.max_concurrency > 0 ? json(info.max_concurrency) : json(nullptr);
  j["duration"] = m.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input_tokens;
  j["total_output_tokens"] = m.total_output_tokens;
  j["request_throughput"] = m.request_throughput;
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  j["cached_tokens"] = m.cached_tokens;
  j["cached_token_share"] = m.cached_token_share;
  add_latency(j, "ttft", m.ttft_ms);
  add_latency(j, "tpot", m.tpot_ms);
  add_latency(j, "itl", m.itl_ms);
  add_latency(j, "e2el", m.e2el_ms);
  add_per_request(j, records);
  return j;
}

}  // namespace courier::bench_tool
