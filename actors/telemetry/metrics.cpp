#include "actors/telemetry/metrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace courier::telemetry {

namespace {

using buckets = prometheus::Histogram::BucketBoundaries;

// vLLM's boundaries, with finer low buckets for latencies: a GPU step takes milliseconds.
const buckets ttft_buckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,  0.75,
                              1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0,
                              2560.0};
const buckets itl_buckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                             0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
const buckets latency_buckets = {0.01, 0.05, 0.1,  0.3,  0.5,  0.8,   1.0,   1.5,   2.0,   2.5,
                                 5.0,  10.0, 15.0, 20.0, 30.0, 40.0,  50.0,  60.0,  120.0, 240.0,
                                 480.0, 960.0, 1920.0, 7680.0};
const buckets step_buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08,
                              0.16,   0.32,  0.64,   1.28,  2.56, 5.12};

buckets powers_of_two(double first, double last) {
  buckets b;
  for (double v = first; v <= last; v *= 2) b.push_back(v);
  return b;
}

const char* reason_label(msg::finish_reason r) {
  switch (r) {
    case msg::finish_reason::stop: return "stop";
    case msg::finish_reason::length: return "length";
    case msg::finish_reason::cancelled: return "abort";  // vLLM's name
    case msg::finish_reason::error: return "error";
    case msg::finish_reason::none: return "none";
  }
  return "none";
}

}  // namespace

server_metrics::server_metrics(const std::string& model_name)
    : registry_(std::make_shared<prometheus::Registry>()), labels_{{"model_name", model_name}} {
  register_load();
  register_scheduler_counters();
  register_cache();
  register_requests();
}

// The running batch, the queue, the KV cache and the state pools; LoRA slots and loads.
void server_metrics::register_load() {
  running_ = &gauge("courier:num_requests_running", "Requests in the running batch.");
  waiting_ = &gauge("courier:num_requests_waiting", "Requests waiting to be scheduled.");
  kv_usage_ = &gauge("courier:kv_cache_usage_perc",
                     "Fraction of KV-cache blocks held by requests (1 = all).");
  state_usage_ = &gauge("courier:mamba_state_usage_perc",
                        "Fraction of a hybrid model's Mamba-2 state slots held by running "
                        "requests (1 = all; 0 for other models).");
  snapshot_usage_ = &gauge("courier:ssm_snapshot_usage_perc",
                           "Fraction of a hybrid model's state snapshot rows kept by the prefix "
                           "cache (0 for other models).");
  lora_slots_ = &gauge("courier:lora_slots",
                       "LoRA adapter slots on the device (lora.max_loras; 0: no adapters).");
  lora_slots_in_use_ =
      &gauge("courier:lora_slots_in_use", "LoRA adapter slots held by running requests.");
  auto family = [this](const char* name, const char* help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
  };
  lora_requests_ = family("courier:lora_requests_total", "Ended requests, by LoRA adapter.");
  lora_prompt_tokens_ = family("courier:lora_prompt_tokens_total",
                               "Prompt tokens of ended requests, by LoRA adapter.");
  lora_generation_tokens_ = family("courier:lora_generation_tokens_total",
                                   "Generated tokens of ended requests, by LoRA adapter.");
}

// The scheduler's counters exported one to one, from their one list.
void server_metrics::register_scheduler_counters() {
  auto add = [this](const char* name, const std::string& label, const char* help,
                    std::uint64_t msg::telemetry_report::*field) {
    prometheus::Labels extra;
    if (const std::size_t eq = label.find('='); eq != std::string::npos) {
      extra.emplace(label.substr(0, eq), label.substr(eq + 1));
    }
    scheduler_counters_.push_back({&counter(name, help, std::move(extra)), field});
  };
#define COURIER_REGISTER(field, metric, label, help) \
  add(metric, label, help, &msg::telemetry_report::field);
  COURIER_SCHEDULER_COUNTERS(COURIER_REGISTER)
#undef COURIER_REGISTER
}

// Tokens, the prefix cache, the host and disk tiers' bytes, drafts from a request's own tokens.
void server_metrics::register_cache() {
  prompt_tokens_ = &counter("courier:prompt_tokens_total", "Prompt tokens of scheduled requests.");
  prefix_queries_ = &counter("courier:prefix_cache_queries_total",
                             "Prompt tokens looked up in the prefix cache.");
  prefix_hits_ = &counter("courier:prefix_cache_hits_total",
                          "Prompt tokens whose cached KV blocks were reused.");
  const std::string host_bytes_help = "Bytes the KV host tier took in from the device (out: "
                                      "spills and swaps) and gave back (in).";
  host_out_bytes_ =
      &counter("courier:kv_host_tier_bytes_total", host_bytes_help, {{"direction", "out"}});
  host_in_bytes_ =
      &counter("courier:kv_host_tier_bytes_total", host_bytes_help, {{"direction", "in"}});
  const std::string disk_bytes_help = "Bytes the KV disk tier wrote and read.";
  disk_write_bytes_ =
      &counter("courier:kv_disk_tier_bytes_total", disk_bytes_help, {{"direction", "write"}});
  disk_read_bytes_ =
      &counter("courier:kv_disk_tier_bytes_total", disk_bytes_help, {{"direction", "read"}});
  disk_cached_ = &gauge("courier:kv_disk_tier_cached_blocks", "KV blocks the disk tier keeps.");
  host_cached_ = &gauge("courier:kv_host_tier_cached_blocks",
                        "KV blocks the host tier's prefix cache keeps.");
  cached_ = &gauge("courier:prefix_cache_blocks",
                   "Device KV blocks the prefix cache indexes: shared by running sequences or "
                   "kept for reuse until evicted.");
  spec_drafts_own_ = &counter("courier:spec_decode_num_drafts_total", COURIER_HELP_DRAFTS,
                              {{"source", "own"}});
}

// How requests ended, the fields they sent that were ignored, and the latency histograms.
void server_metrics::register_requests() {
  success_ = &prometheus::BuildCounter()
                  .Name("courier:request_success_total")
                  .Help("Requests that ended, by finish reason (abort: cancelled).")
                  .Register(*registry_);
  failure_ = &prometheus::BuildCounter()
                  .Name("courier:request_failure_total")
                  .Help("Requests that failed, by error.")
                  .Register(*registry_);
  ignored_fields_ = &prometheus::BuildCounter()
                         .Name("courier:request_ignored_fields_total")
                         .Help("Request body fields courier ignored (not supported), by field "
                               "name; past 64 names, 'other'.")
                         .Register(*registry_);
  for (const char* r : {"stop", "length", "abort", "error"}) {
    prometheus::Labels l = labels_;
    l["finished_reason"] = r;
    success_->Add(l);  // present from the start, at 0
  }
  ttft_ = &histogram("courier:time_to_first_token_seconds", "Time to first token.", ttft_buckets);
  itl_ = &histogram("courier:inter_token_latency_seconds",
                    "Time between consecutive outputs of one request.", itl_buckets);
  e2e_ = &histogram("courier:e2e_request_latency_seconds", "Arrival to end.", latency_buckets);
  queue_ = &histogram("courier:request_queue_time_seconds", "Arrival to first scheduled.",
                      latency_buckets);
  prefill_ = &histogram("courier:request_prefill_time_seconds",
                        "First scheduled to first token.", latency_buckets);
  decode_ = &histogram("courier:request_decode_time_seconds", "First token to end.",
                       latency_buckets);
  prompt_len_ = &histogram("courier:request_prompt_tokens", "Prompt length of ended requests.",
                           powers_of_two(1, 1 << 20));
  generation_len_ = &histogram("courier:request_generation_tokens",
                               "Generated tokens of ended requests.", powers_of_two(1, 1 << 20));
  iteration_tokens_ = &histogram("courier:iteration_tokens_total", "Tokens fed per engine step.",
                                 powers_of_two(1, 1 << 16));
  step_time_ = &histogram("courier:step_duration_seconds",
                          "Engine step time, plan sent to result handled.", step_buckets);
  step_rows_ = &histogram("courier:step_batch_size", "Rows (sequences) per engine step.",
                          powers_of_two(1, 4096));
}

std::vector<std::string> server_metrics::count_ignored_fields(const msg::admission_report& r) {
  std::vector<std::string> first_seen;
  for (const std::string& field : r.ignored_fields) {
    std::string label = field;
    if (!ignored_field_names_.count(field)) {
      const bool plain = field.size() <= 64 && std::all_of(field.begin(), field.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                                  c == '-' || c == '.';
                         });
      if (!plain || ignored_field_names_.size() >= max_ignored_field_names) {
        label = "other";
      } else {
        ignored_field_names_.insert(field);
        first_seen.push_back(field);
      }
    }
    prometheus::Labels l = labels_;
    l.emplace("field", label);
    ignored_fields_->Add(l).Increment();
  }
  return first_seen;
}

prometheus::Counter& server_metrics::counter(const std::string& name, const std::string& help,
                                             prometheus::Labels extra) {
  auto& family = prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
  prometheus::Labels l = labels_;
  l.insert(extra.begin(), extra.end());
  return family.Add(l);
}

prometheus::Gauge& server_metrics::gauge(const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add(labels_);
}

prometheus::Histogram& server_metrics::histogram(const std::string& name, const std::string& help,
                                                 buckets b) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(*registry_).Add(labels_, b);
}

void server_metrics::apply(const msg::telemetry_report& r) {
  running_->Set(r.num_running);
  waiting_->Set(r.num_waiting);
  kv_usage_->Set(r.kv_usage);
  state_usage_->Set(r.state_usage);
  snapshot_usage_->Set(r.snapshot_usage);
  lora_slots_->Set(r.lora_slots);
  lora_slots_in_use_->Set(r.lora_slots_in_use);
  host_cached_->Set(r.host_cached_blocks);
  cached_->Set(r.cached_blocks);
  disk_cached_->Set(static_cast<double>(r.disk_cached_blocks));
  auto add = [](prometheus::Counter* c, std::uint64_t n) {
    if (n) c->Increment(static_cast<double>(n));
  };
  for (const scheduler_counter& c : scheduler_counters_) add(c.counter, r.*c.field);
  add(prompt_tokens_, r.prompt_tokens);
  add(prefix_queries_, r.prefix_queries);
  add(prefix_hits_, r.prefix_hits);
  add(host_out_bytes_, r.host_tier_out_bytes);
  add(host_in_bytes_, r.host_tier_in_bytes);
  add(disk_write_bytes_, r.disk_written_bytes);
  add(disk_read_bytes_, r.disk_read_bytes);
  add(spec_drafts_own_, r.spec_drafts - r.spec_drafts_shared);
  for (const msg::step_summary& s : r.steps) {
    iteration_tokens_->Observe(s.num_prefill_tokens + s.num_decode_rows + s.num_draft_tokens);
    step_time_->Observe(s.duration_s);
    step_rows_->Observe(s.num_rows);
  }
  for (const msg::request_summary& q : r.finished) {
    prometheus::Labels l = labels_;
    l["finished_reason"] = reason_label(q.finish);
    success_->Add(l).Increment();
    if (q.finish == msg::finish_reason::error) {
      prometheus::Labels e = labels_;
      e["error"] = msg::to_string(q.error);
      failure_->Add(e).Increment();
    }
    if (!q.adapter.empty()) {
      prometheus::Labels a = labels_;
      a["adapter"] = q.adapter;
      lora_requests_->Add(a).Increment();
      lora_prompt_tokens_->Add(a).Increment(q.prompt_tokens);
      lora_generation_tokens_->Add(a).Increment(q.generation_tokens);
    }
    e2e_->Observe(q.e2e_s);
    prompt_len_->Observe(q.prompt_tokens);
    generation_len_->Observe(q.generation_tokens);
    if (q.queue_s >= 0) queue_->Observe(q.queue_s);
    if (q.ttft_s >= 0) ttft_->Observe(q.ttft_s);
    if (q.prefill_s >= 0) prefill_->Observe(q.prefill_s);
    if (q.decode_s >= 0) decode_->Observe(q.decode_s);
    for (float v : q.inter_token_s) itl_->Observe(v);
  }
}

std::string server_metrics::render() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace courier::telemetry
