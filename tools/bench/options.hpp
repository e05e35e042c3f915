#pragma once
// The command line of courier-bench: every flag, its default, and the checks that make a bad
// flag a usage error (exit 2) naming the flag. Flag names are vLLM's `vllm bench serve` ones
// where vLLM has the flag, and sglang's `--gsp-*` for the shared-prefix dataset.
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/bench/dataset.hpp"

namespace courier::bench_tool {

// A bad command line; main prints it with the usage text and exits 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class dataset_kind { random, shared_prefix, multi_turn };

struct bench_options {
  // Server.
  std::string base_url = "http://127.0.0.1:8000";
  std::string endpoint = "/v1/completions";
  std::string model;  // empty: the first id of GET /v1/models
  std::string api_key;

  // Load.
  dataset_kind dataset = dataset_kind::random;
  std::int64_t num_prompts = 1000;
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s; inf: all at 0
  std::int64_t max_concurrency = 0;                               // 0: unlimited
  std::uint64_t seed = 0;

  // random (vLLM's RandomDataset).
  std::int64_t random_input_len = 1024;
  std::int64_t random_output_len = 128;
  double random_range_ratio = 0.0;  // in [0, 1)
  std::int64_t random_prefix_len = 0;

  // shared-prefix (sglang's generated-shared-prefix; sglang's defaults).
  std::int64_t gsp_num_groups = 64;
  std::int64_t gsp_prompts_per_group = 16;
  std::int64_t gsp_system_prompt_len = 2048;
  std::int64_t gsp_question_len = 128;
  std::int64_t gsp_output_len = 256;

  // multi-turn (conversations whose turns extend the conversation so far).
  std::int64_t mt_conversations = 16;
  std::int64_t mt_turns = 4;
  std::int64_t mt_system_prompt_len = 512;
  std::int64_t mt_message_len = 128;
  std::int64_t mt_output_len = 128;

  // Prompts.
  prompt_format format = prompt_format::ids;
  std::string tokenizer;                   // a model folder or a tokenizer.json
  std::optional<std::int64_t> vocab_size;  // ids drawn from [0, vocab_size) without a tokenizer

  // Sampling and requests.
  bool ignore_eos = false;
  double temperature = 0.0;
  double timeout_s = 600.0;  // per request, from its send
  std::string extra_body;    // a JSON object merged into every request body; empty: none

  // Output.
  std::string result_json;  // empty: none
  std::string plot_svg;     // empty: none
  std::string label;
  std::vector<double> metric_percentiles = {99};  // each in [0, 100]
  bool progress = false;                          // one line per 10% of requests done, on stderr

  bool help = false;
};

// Parses argv[1..]: `--flag value` or `--flag=value`. Throws usage_error naming the flag on an
// unknown flag, a missing or malformed value, a value out of range, or a combination that
// cannot run (text prompts without --tokenizer, ids with neither --tokenizer nor
// --vocab-size).
bench_options parse_options(const std::vector<std::string>& args);

extern const char* const usage_text;

}  // namespace courier::bench_tool
