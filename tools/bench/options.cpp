#include "tools/bench/options.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "tools/bench/openai_stream.hpp"

namespace courier::bench_tool {

const char* const usage_text =
    R"(usage: courier-bench [--base-url URL] [--endpoint PATH] [--model NAME] [FLAGS]

Sends a benchmark load to an OpenAI-compatible server and reports what `vllm bench serve`
reports: throughput, TTFT, TPOT, ITL and end-to-end latency, plus the prefix-cache share.

server:
  --base-url URL              http://HOST:PORT[/PREFIX] (default http://127.0.0.1:8000)
  --endpoint PATH             /v1/completions (default) or /v1/chat/completions
  --model NAME                model name sent; default: the first of GET /v1/models
  --api-key KEY               sent as "Authorization: Bearer KEY"
load:
  --dataset-name NAME         random (default) | shared-prefix | multi-turn
  --num-prompts N             requests for the random dataset (default 1000)
  --request-rate R            requests/s, Poisson arrivals; inf (default): all at once
  --max-concurrency C         most requests in flight; default unlimited
  --seed S                    prompts and arrival times (default 0)
random dataset:
  --random-input-len N        prompt tokens (default 1024)
  --random-output-len N       max_tokens (default 128)
  --random-range-ratio R      lengths uniform in [len*(1-R), len*(1+R)], 0 <= R < 1 (default 0)
  --random-prefix-len N       random tokens shared by every prompt, before it (default 0)
shared-prefix dataset (sglang's generated-shared-prefix):
  --gsp-num-groups N          groups sharing a system prompt (default 64)
  --gsp-prompts-per-group N   prompts per group (default 16)
  --gsp-system-prompt-len N   tokens of each group's system prompt (default 2048)
  --gsp-question-len N        tokens of each prompt's own question (default 128)
  --gsp-output-len N          max_tokens (default 256)
multi-turn dataset (conversations; a turn is sent when the one before ended, its prompt the
conversation so far: the turns before, their answers' ids, its own message; ids format only):
  --mt-conversations N        conversations (default 16)
  --mt-turns N                turns each (default 4)
  --mt-system-prompt-len N    tokens of each conversation's system prompt (default 512)
  --mt-message-len N          tokens of each user message (default 128)
  --mt-output-len N           max_tokens of each answer (default 128)
prompts:
  --prompt-format F           ids (default): send token ids; text: send the decoded text
  --tokenizer DIR             model folder (or tokenizer.json) to draw and decode ids with;
                              a folder without tokenizer.json: ids below config.json's
                              vocab_size
  --vocab-size N              ids drawn from [0, N) when there is no tokenizer
requests:
  --ignore-eos                ask the server to generate exactly max_tokens
  --temperature T             (default 0)
  --timeout-s S               per-request limit from its send (default 600)
  --extra-body JSON           an object whose members are added to every request body, e.g.
                              '{"response_format": {"type": "json_object"}}' (as vLLM's)
output:
  --result-json FILE          vLLM-style result file with per-request arrays
  --plot FILE.svg             throughput and latency over time
  --label TEXT                a name stored in the result file
  --metric-percentiles LIST   percentiles reported, comma-separated (default 99)
  --progress                  a line on stderr at each 10% of requests done
  --help

exit status: 0 every request succeeded; 1 some request failed, or an output file or the
model query failed; 2 bad usage.
)";

namespace {

using setter = std::function<void(bench_options&, const std::string& flag, const std::string&)>;

std::int64_t to_int(const std::string& flag, const std::string& v, std::int64_t min) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) {
    throw usage_error(fmt::format("{} expects an integer, got '{}'", flag, v));
  }
  if (x < min) throw usage_error(fmt::format("{} must be >= {}, got {}", flag, min, x));
  return x;
}

double to_double(const std::string& flag, const std::string& v) {
  if (v == "inf" || v == "Inf" || v == "INF") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || std::isnan(x)) {
    throw usage_error(fmt::format("{} expects a number, got '{}'", flag, v));
  }
  return x;
}

setter int_flag(std::int64_t bench_options::*field, std::int64_t min) {
  return [=](bench_options& o, const std::string& f, const std::string& v) {
    o.*field = to_int(f, v, min);
  };
}

setter string_flag(std::string bench_options::*field) {
  return [=](bench_options& o, const std::string& f, const std::string& v) {
    if (v.empty()) throw usage_error(fmt::format("{} expects a non-empty value", f));
    o.*field = v;
  };
}

// A number flag, refused (FLAG must be `what`) unless `ok`.
setter number_flag(double bench_options::*field, bool (*ok)(double), const char* what) {
  return [=](bench_options& o, const std::string& f, const std::string& v) {
    o.*field = to_double(f, v);
    if (!ok(o.*field)) throw usage_error(f + " must be " + what);
  };
}

// A flag naming one of `names` (FLAG must be `expected` otherwise).
template <class E>
setter choice_flag(E bench_options::*field, std::vector<std::pair<std::string, E>> names,
                   const char* expected) {
  return [=](bench_options& o, const std::string& f, const std::string& v) {
    for (const auto& [name, e] : names) {
      if (name == v) {
        o.*field = e;
        return;
      }
    }
    throw usage_error(fmt::format("{} must be {}, got '{}'", f, expected, v));
  };
}

void set_percentiles(bench_options& o, const std::string& f, const std::string& v) {
  o.metric_percentiles.clear();
  std::size_t from = 0;
  while (from <= v.size()) {
    const std::size_t comma = std::min(v.find(',', from), v.size());
    const double p = to_double(f, v.substr(from, comma - from));
    if (!(p >= 0 && p <= 100)) throw usage_error(f + " values must be in [0, 100]");
    o.metric_percentiles.push_back(p);
    from = comma + 1;
  }
}

const std::map<std::string, setter>& value_flags() {
  static const std::map<std::string, setter> flags = {
      {"--base-url", string_flag(&bench_options::base_url)},
      {"--endpoint", string_flag(&bench_options::endpoint)},
      {"--model", string_flag(&bench_options::model)},
      {"--api-key", string_flag(&bench_options::api_key)},
      {"--dataset-name", choice_flag<dataset_kind>(&bench_options::dataset,
                                                   {{"random", dataset_kind::random},
                                                    {"shared-prefix", dataset_kind::shared_prefix},
                                                    {"generated-shared-prefix",
                                                     dataset_kind::shared_prefix},
                                                    {"multi-turn", dataset_kind::multi_turn}},
                                                   "random, shared-prefix or multi-turn")},
      {"--num-prompts", int_flag(&bench_options::num_prompts, 1)},
      {"--request-rate", number_flag(&bench_options::request_rate,
                                     [](double x) { return x > 0; }, "> 0 (or inf)")},
      {"--max-concurrency", int_flag(&bench_options::max_concurrency, 1)},
      {"--seed",
       [](bench_options& o, const std::string& f, const std::string& v) {
         o.seed = static_cast<std::uint64_t>(to_int(f, v, 0));
       }},
      {"--random-input-len", int_flag(&bench_options::random_input_len, 1)},
      {"--random-output-len", int_flag(&bench_options::random_output_len, 1)},
      {"--random-range-ratio", number_flag(&bench_options::random_range_ratio,
                                           [](double x) { return x >= 0 && x < 1; },
                                           "in [0, 1)")},
      {"--random-prefix-len", int_flag(&bench_options::random_prefix_len, 0)},
      {"--gsp-num-groups", int_flag(&bench_options::gsp_num_groups, 1)},
      {"--gsp-prompts-per-group", int_flag(&bench_options::gsp_prompts_per_group, 1)},
      {"--gsp-system-prompt-len", int_flag(&bench_options::gsp_system_prompt_len, 0)},
      {"--gsp-question-len", int_flag(&bench_options::gsp_question_len, 1)},
      {"--gsp-output-len", int_flag(&bench_options::gsp_output_len, 1)},
      {"--mt-conversations", int_flag(&bench_options::mt_conversations, 1)},
      {"--mt-turns", int_flag(&bench_options::mt_turns, 1)},
      {"--mt-system-prompt-len", int_flag(&bench_options::mt_system_prompt_len, 0)},
      {"--mt-message-len", int_flag(&bench_options::mt_message_len, 1)},
      {"--mt-output-len", int_flag(&bench_options::mt_output_len, 1)},
      {"--prompt-format",
       choice_flag<prompt_format>(&bench_options::format,
                                  {{"ids", prompt_format::ids}, {"text", prompt_format::text}},
                                  "ids or text")},
      {"--tokenizer", string_flag(&bench_options::tokenizer)},
      {"--vocab-size", [](bench_options& o, const std::string& f,
                          const std::string& v) { o.vocab_size = to_int(f, v, 1); }},
      {"--temperature", number_flag(&bench_options::temperature,
                                    [](double x) { return x >= 0 && !std::isinf(x); },
                                    "a finite number >= 0")},
      {"--timeout-s", number_flag(&bench_options::timeout_s,
                                  [](double x) { return x > 0 && !std::isinf(x); },
                                  "a finite number > 0")},
      {"--extra-body",
       [](bench_options& o, const std::string& f, const std::string& v) {
         const auto j = nlohmann::json::parse(v, nullptr, false);
         if (!j.is_object()) throw usage_error(f + " must be a JSON object");
         o.extra_body = v;
       }},
      {"--result-json", string_flag(&bench_options::result_json)},
      {"--plot", string_flag(&bench_options::plot_svg)},
      {"--label", string_flag(&bench_options::label)},
      {"--metric-percentiles", set_percentiles},
  };
  return flags;
}

const std::map<std::string, bool bench_options::*>& switch_flags() {
  static const std::map<std::string, bool bench_options::*> flags = {
      {"--ignore-eos", &bench_options::ignore_eos},
      {"--progress", &bench_options::progress},
      {"--help", &bench_options::help},
      {"-h", &bench_options::help},
  };
  return flags;
}

void check_combination(const bench_options& o) {
  if (o.base_url.rfind("http://", 0) != 0) {
    throw usage_error("--base-url must start with http:// (https is not supported), got '" +
                      o.base_url + "'");
  }
  if (o.endpoint.front() != '/') throw usage_error("--endpoint must start with '/'");
  if (o.format == prompt_format::text && o.tokenizer.empty()) {
    throw usage_error("--prompt-format text needs --tokenizer DIR to decode the ids into text");
  }
  if (o.dataset == dataset_kind::multi_turn && o.format != prompt_format::ids) {
    throw usage_error("--dataset-name multi-turn needs --prompt-format ids (a later turn's prompt "
                      "holds the ids the server generated)");
  }
  if (o.dataset == dataset_kind::multi_turn && api_for_endpoint(o.endpoint) == api_kind::chat) {
    throw usage_error("--dataset-name multi-turn sends prompts of ids: use /v1/completions");
  }
  if (o.tokenizer.empty() && !o.vocab_size) {
    throw usage_error(
        "--prompt-format ids needs --tokenizer DIR or --vocab-size N (the range of random ids)");
  }
}

}  // namespace

bench_options parse_options(const std::vector<std::string>& args) {
  bench_options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (const auto s = switch_flags().find(flag); s != switch_flags().end()) {
      if (value) throw usage_error(flag + " takes no value");
      o.*(s->second) = true;
      continue;
    }
    const auto v = value_flags().find(flag);
    if (v == value_flags().end()) {
      throw usage_error(flag.rfind("-", 0) == 0 ? "unknown flag " + flag
                                                : "unexpected argument '" + flag + "'");
    }
    if (!value) {
      if (i + 1 >= args.size()) throw usage_error(flag + " expects a value");
      value = args[++i];
    }
    v->second(o, flag, *value);
  }
  if (!o.help) check_combination(o);
  return o;
}

}  // namespace courier::bench_tool
