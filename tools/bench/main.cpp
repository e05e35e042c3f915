// courier-bench: a serving benchmark for OpenAI-compatible servers that measures what
// `vllm bench serve` measures. See tools/bench/README.md.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "tools/bench/arrivals.hpp"
#include "tools/bench/load_runner.hpp"
#include "tools/bench/model_query.hpp"
#include "tools/bench/options.hpp"
#include "tools/bench/report_table.hpp"
#include "tools/bench/result_json.hpp"
#include "tools/bench/svg_report.hpp"
#include "tools/bench/timeline.hpp"

namespace {

using namespace courier::bench_tool;

constexpr std::size_t max_errors_listed = 5;

token_sampler make_sampler(const bench_options& o) {
  try {
    return sampler_for(o.tokenizer, o.vocab_size, o.format == prompt_format::text);
  } catch (const std::exception& e) {
    throw usage_error(fmt::format("--tokenizer {}: {}", o.tokenizer, e.what()));
  }
}

std::vector<bench_request> make_requests(const bench_options& o, const token_sampler& ids) {
  if (o.dataset == dataset_kind::multi_turn) {
    return multi_turn_dataset({o.mt_conversations, o.mt_turns, o.mt_system_prompt_len,
                               o.mt_message_len, o.mt_output_len},
                              ids, o.seed);
  }
  if (o.dataset == dataset_kind::shared_prefix) {
    return shared_prefix_dataset({o.gsp_num_groups, o.gsp_prompts_per_group,
                                  o.gsp_system_prompt_len, o.gsp_question_len, o.gsp_output_len},
                                 ids, o.format, o.seed);
  }
  return random_dataset({o.num_prompts, o.random_input_len, o.random_output_len,
                         o.random_range_ratio, o.random_prefix_len},
                        ids, o.format, o.seed);
}

std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

run_info describe_run(const bench_options& o, const std::string& model, std::size_t n) {
  run_info info;
  info.date = local_date();
  info.label = o.label;
  info.base_url = o.base_url;
  info.endpoint = o.endpoint;
  info.backend = api_for_endpoint(o.endpoint) == api_kind::chat ? "openai-chat" : "openai";
  info.model = model;
  info.tokenizer = o.tokenizer;
  info.dataset = o.dataset == dataset_kind::shared_prefix ? "shared-prefix"
                 : o.dataset == dataset_kind::multi_turn  ? "multi-turn"
                                                          : "random";
  info.prompt_format = o.format == prompt_format::text ? "text" : "ids";
  info.num_prompts = static_cast<std::int64_t>(n);
  info.request_rate = o.request_rate;
  info.max_concurrency = o.max_concurrency;
  info.seed = o.seed;
  info.percentiles = o.metric_percentiles;
  return info;
}

// The distinct errors with their counts, most frequent first, on stdout after the table.
void list_errors(const std::vector<request_record>& records) {
  std::map<std::string, std::size_t> counts;
  for (const request_record& r : records) {
    if (!r.success) ++counts[r.error];
  }
  std::vector<std::pair<std::size_t, std::string>> sorted;
  for (const auto& [e, n] : counts) sorted.emplace_back(n, e);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (sorted.empty()) return;
  std::cout << "Errors (requests: error):\n";
  for (std::size_t i = 0; i < sorted.size() && i < max_errors_listed; ++i) {
    std::cout << fmt::format("  {}: {}\n", sorted[i].first, sorted[i].second);
  }
  if (sorted.size() > max_errors_listed) {
    std::cout << fmt::format("  ... and {} other errors\n", sorted.size() - max_errors_listed);
  }
}

// Writes through `write`; false (with a message) when the file cannot be written.
template <class Write>
bool write_file(const std::string& path, Write write) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) write(out);
  out.close();
  if (!out) {
    std::cerr << fmt::format("courier-bench: {}: cannot write: {}\n", path, std::strerror(errno));
    return false;
  }
  return true;
}

// Every request in flight holds a socket: with an unlimited concurrency and an infinite rate
// that is one per request, past the usual soft limit of 1024 descriptors. Raises the soft limit
// to the hard one, and warns when even that is too few (connects past it fail).
void raise_open_file_limit(std::size_t most_in_flight) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  constexpr std::size_t reserved = 32;  // stdio, the tokenizer, output files
  if (lim.rlim_cur != RLIM_INFINITY && most_in_flight + reserved > lim.rlim_cur) {
    std::cerr << fmt::format(
        "courier-bench: warning: up to {} requests in flight but {} file descriptors; the "
        "ones past that fail to connect (raise `ulimit -n` or set --max-concurrency)\n",
        most_in_flight, static_cast<std::uint64_t>(lim.rlim_cur));
  }
}

int run(const bench_options& o) {
  base_url url;
  try {
    url = parse_base_url(o.base_url);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--base-url: ") + e.what());
  }
  const token_sampler sampler = make_sampler(o);
  std::vector<bench_request> requests = make_requests(o, sampler);
  // --model a,b,c: the requests take the names in turn (a later turn its conversation's).
  if (o.model.find(',') != std::string::npos) {
    std::vector<std::string> names;
    for (std::size_t at = 0; at <= o.model.size();) {
      const std::size_t comma = std::min(o.model.find(',', at), o.model.size());
      if (comma > at) names.push_back(o.model.substr(at, comma - at));
      at = comma + 1;
    }
    std::size_t next = 0;
    for (bench_request& r : requests) {
      r.model = r.follows >= 0 ? requests[static_cast<std::size_t>(r.follows)].model
                               : names[next++ % names.size()];
    }
  }

  std::string model = o.model;
  if (model.empty()) {
    std::string error;
    const auto id = query_model_id(url, o.api_key, std::min(o.timeout_s, 30.0), error);
    if (!id) {
      std::cerr << "courier-bench: no --model given and the server did not name one: " << error
                << '\n';
      return 1;
    }
    model = *id;
  }
  const run_info info = describe_run(o, model, requests.size());
  std::cout << fmt::format(
      "courier-bench: {} {} requests to {}{} (model {}), rate {}, "
      "max concurrency {}\n",
      requests.size(), info.dataset, o.base_url, o.endpoint, model,
      std::isinf(o.request_rate) ? "inf" : fmt::format("{}/s", o.request_rate),
      o.max_concurrency > 0 ? std::to_string(o.max_concurrency) : "unlimited");
  std::cout.flush();

  raise_open_file_limit(o.max_concurrency > 0
                            ? std::min(requests.size(), static_cast<std::size_t>(o.max_concurrency))
                            : requests.size());
  load_config config;
  config.client.url = url;
  config.client.endpoint = o.endpoint;
  config.client.api_key = o.api_key;
  config.client.body = {model, o.temperature, o.ignore_eos, o.extra_body,
                        o.dataset == dataset_kind::multi_turn};
  config.client.timeout_s = o.timeout_s;
  config.max_concurrency = o.max_concurrency;
  const auto arrivals = arrival_offsets_s(requests.size(), o.request_rate, o.seed);
  const auto records = run_load(config, requests, arrivals, o.progress ? &std::cerr : nullptr);

  const bench_metrics m = compute_metrics(records, o.metric_percentiles);
  write_report_table(std::cout, info, m);
  list_errors(records);
  bool written = true;
  if (!o.result_json.empty()) {
    written &= write_file(o.result_json, [&](std::ostream& out) {
      out << result_json(info, m, records).dump(2) << '\n';
    });
  }
  if (!o.plot_svg.empty()) {
    const std::string title =
        fmt::format("courier-bench{}: {} {} requests to {}", o.label.empty() ? "" : " " + o.label,
                    requests.size(), info.dataset, model);
    written &= write_file(o.plot_svg, [&](std::ostream& out) {
      write_svg_report(out, build_timeline(records), title);
    });
  }
  return m.failed == 0 && written ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench_options o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
    if (o.help) {
      std::cout << usage_text;
      return 0;
    }
    return run(o);
  } catch (const usage_error& e) {
    std::cerr << "courier-bench: " << e.what() << "\n\n" << usage_text;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "courier-bench: " << e.what() << '\n';
    return 1;
  }
}
