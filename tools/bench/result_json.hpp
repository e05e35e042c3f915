#pragma once
// The --result-json file: vLLM's result file (`vllm bench serve --save-result`), key for key
// where vLLM has the key, plus courier-bench's own (marked below).
//
// vLLM's keys: date, label, endpoint_type, model_id, tokenizer_id, num_prompts, request_rate
// ("inf" or a number), max_concurrency (null when unlimited), duration, completed, failed,
// total_input_tokens, total_output_tokens, request_throughput, output_throughput,
// total_token_throughput, max_output_tokens_per_s, max_concurrent_requests,
// {mean,median,std}_{ttft,tpot,itl,e2el}_ms, p{P}_{ttft,tpot,itl,e2el}_ms, and per request (in
// send order of the dataset, failed ones included): input_lens, output_lens (0 when failed),
// ttfts (seconds, 0 when failed), itls (lists of seconds), errors ("" on success).
// Ours: base_url, endpoint, dataset_name, prompt_format, seed, cached_tokens,
// cached_token_share, and per request cached_lens, send_times and e2els (seconds from the
// start of the run), generated_text_lens (bytes; vLLM stores the texts themselves).
#include <nlohmann/json.hpp>
#include <vector>

#include "tools/bench/metrics.hpp"
#include "tools/bench/request_record.hpp"
#include "tools/bench/run_info.hpp"

namespace courier::bench_tool {

nlohmann::json result_json(const run_info& info, const bench_metrics& m,
                           const std::vector<request_record>& records);

}  // namespace courier::bench_tool
