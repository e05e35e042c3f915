#pragma once
// The server's Prometheus metrics, named as vLLM's with the prefix "courier:" so dashboards built
// for vLLM map over, each labelled with model_name. Built on prometheus-cpp (Debian's
// prometheus-cpp-dev); owned by the telemetry actor, which is the only caller.
//
// Counters only ever increase (they add the increments of each report); gauges hold the latest
// report's values; histograms observe per-step and per-request values.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "messages/telemetry.hpp"

namespace courier::telemetry {

class server_metrics {
 public:
  explicit server_metrics(const std::string& model_name);

  void apply(const msg::telemetry_report& r);
  // Counts each ignored field under its name; returns the names seen for the first time (to be
  // logged once). Names are labels, so a client cannot grow the series without bound: past
  // max_ignored_field_names distinct names, and for names that are not short identifiers
  // (letters, digits, _ - .; at most 64 bytes), the count goes to "other".
  std::vector<std::string> count_ignored_fields(const msg::admission_report& r);
  static constexpr std::size_t max_ignored_field_names = 64;
  // The text exposition format (what GET /metrics serves).
  std::string render() const;

 private:
  // The constructor's registrations, by theme (metrics.cpp).
  void register_load();
  void register_scheduler_counters();
  void register_cache();
  void register_requests();
  prometheus::Counter& counter(const std::string& name, const std::string& help,
                               prometheus::Labels extra = {});
  prometheus::Histogram& histogram(const std::string& name, const std::string& help,
                                   prometheus::Histogram::BucketBoundaries buckets);
  prometheus::Gauge& gauge(const std::string& name, const std::string& help);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Labels labels_;

  prometheus::Gauge *running_, *waiting_, *kv_usage_, *state_usage_, *snapshot_usage_;
  prometheus::Gauge *host_cached_, *cached_, *disk_cached_, *lora_slots_, *lora_slots_in_use_;
  // The scheduler's counters exported one to one (messages/scheduler_counters.hpp): each
  // Prometheus counter and the report field it adds.
  struct scheduler_counter {
    prometheus::Counter* counter;
    std::uint64_t msg::telemetry_report::*field;
  };
  std::vector<scheduler_counter> scheduler_counters_;
  prometheus::Counter *prompt_tokens_, *prefix_queries_, *prefix_hits_, *spec_drafts_own_,
      *host_out_bytes_, *host_in_bytes_, *disk_write_bytes_, *disk_read_bytes_;
  // Per LoRA adapter (labelled adapter=NAME): ended requests, their prompt and output tokens.
  prometheus::Family<prometheus::Counter>* lora_requests_ = nullptr;
  prometheus::Family<prometheus::Counter>* lora_prompt_tokens_ = nullptr;
  prometheus::Family<prometheus::Counter>* lora_generation_tokens_ = nullptr;
  prometheus::Family<prometheus::Counter>* success_ = nullptr;
  prometheus::Family<prometheus::Counter>* failure_ = nullptr;
  prometheus::Family<prometheus::Counter>* ignored_fields_ = nullptr;
  std::set<std::string> ignored_field_names_;
  prometheus::Histogram *ttft_, *itl_, *e2e_, *queue_, *prefill_, *decode_, *prompt_len_,
      *generation_len_, *iteration_tokens_, *step_time_, *step_rows_;
};

}  // namespace courier::telemetry
