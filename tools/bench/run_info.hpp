#pragma once
// What was run: the settings the report and the result file repeat next to the metrics.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace courier::bench_tool {

struct run_info {
  std::string date;  // local time at the start, "YYYYmmdd-HHMMSS" as vLLM writes it
  std::string label;
  std::string base_url;
  std::string endpoint;
  std::string backend;  // "openai" or "openai-chat", vLLM's names for the two APIs
  std::string model;
  std::string tokenizer;      // empty: none
  std::string dataset;        // "random" or "shared-prefix"
  std::string prompt_format;  // "ids" or "text"
  std::int64_t num_prompts = 0;
  double request_rate = std::numeric_limits<double>::infinity();
  std::int64_t max_concurrency = 0;  // 0: unlimited
  std::uint64_t seed = 0;
  std::vector<double> percentiles = {99};
};

}  // namespace courier::bench_tool
