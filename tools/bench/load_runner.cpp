#include "tools/bench/load_runner.hpp"

#include <fmt/format.h>

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <ostream>

namespace courier::bench_tool {
namespace {

using steady = std::chrono::steady_clock;

class runner {
 public:
  runner(const load_config& config, const std::vector<bench_request>& requests,
         const std::vector<double>& arrival_s, std::ostream* progress)
      : config_(config),
        requests_(requests),
        arrival_s_(arrival_s),
        progress_(progress),
        timer_(io_),
        records_(requests.size()),
        sent_(requests),
        next_turn_(requests.size(), -1) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const std::int64_t before = requests[i].follows;
      if (before >= 0) next_turn_[static_cast<std::size_t>(before)] = static_cast<std::int64_t>(i);
    }
  }

  std::vector<request_record> run() {
    std::string error;
    endpoints_ = resolve_endpoints(config_.client.url.host, config_.client.url.port, error);
    if (endpoints_.empty()) {
      for (request_record& r : records_) r.error = error;
      return std::move(records_);
    }
    start_ = steady::now();
    now_s_ = [start = start_] {
      return std::chrono::duration<double>(steady::now() - start).count();
    };
    arrive_due();
    io_.run();
    return std::move(records_);
  }

 private:
  // Admits every request whose arrival time has come, then waits for the next one.
  void arrive_due() {
    const double now = now_s_();
    while (next_ < requests_.size() && arrival_s_[next_] <= now) {
      const std::size_t i = next_++;
      if (requests_[i].follows < 0) admit(i);  // a later turn comes when the one before ends
    }
    if (next_ == requests_.size()) return;
    timer_.expires_at(start_ + std::chrono::duration_cast<steady::duration>(
                                   std::chrono::duration<double>(arrival_s_[next_])));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) arrive_due();
    });
  }

  void admit(std::size_t i) {
    if (config_.max_concurrency > 0 && in_flight_ >= config_.max_concurrency) {
      waiting_.push_back(i);
    } else {
      launch(i);
    }
  }

  void launch(std::size_t i) {
    ++in_flight_;
    start_stream_request(io_, endpoints_, config_.client, sent_[i], now_s_,
                         [this, i](request_record rec) { on_finished(i, std::move(rec)); });
  }

  void on_finished(std::size_t i, request_record rec) {
    if (requests_[i].follows >= 0) rec.prompt_ids.assign(sent_[i].prompt_ids.begin(),
                                                         sent_[i].prompt_ids.end());
    records_[i] = std::move(rec);
    --in_flight_;
    ++num_done_;
    report_progress();
    next_turn(i);
    // (A conversation's next turn, admitted just above, may have taken the place.)
    while (!waiting_.empty() &&
           (config_.max_concurrency <= 0 || in_flight_ < config_.max_concurrency)) {
      const std::size_t j = waiting_.front();
      waiting_.pop_front();
      launch(j);
    }
  }

  // A conversation's next turn, once turn i ended: the conversation so far (turn i's prompt and
  // the ids it generated) and its own message; failed with it when turn i failed.
  void next_turn(std::size_t i) {
    const std::int64_t j = next_turn_[i];
    if (j < 0) return;
    const auto k = static_cast<std::size_t>(j);
    const request_record& done = records_[i];
    if (!done.success || done.output_ids.empty()) {
      records_[k].error = done.success ? "the turn before returned no token ids"
                                       : "the turn before failed";
      records_[k].client_input_len = requests_[k].input_len;
      records_[k].output_len_requested = requests_[k].output_len;
      ++num_done_;
      report_progress();
      next_turn(k);
      return;
    }
    bench_request& r = sent_[k];
    std::vector<token_id> prompt = sent_[i].prompt_ids;
    for (const std::int64_t id : done.output_ids) prompt.push_back(static_cast<token_id>(id));
    prompt.insert(prompt.end(), requests_[k].prompt_ids.begin(), requests_[k].prompt_ids.end());
    r.prompt_ids = std::move(prompt);
    r.input_len = static_cast<std::int64_t>(r.prompt_ids.size());
    admit(k);
  }

  void report_progress() {
    if (!progress_) return;
    const std::size_t n = requests_.size();
    if (num_done_ * 10 / n != (num_done_ - 1) * 10 / n || num_done_ == n) {
      *progress_ << fmt::format("courier-bench: {}/{} requests done ({:.1f} s)\n", num_done_, n,
                                now_s_());
    }
  }

  const load_config& config_;                   // Borrowed from run_load's caller
  const std::vector<bench_request>& requests_;  // Borrowed
  const std::vector<double>& arrival_s_;        // Borrowed
  std::ostream* progress_;                      // Borrowed; may be null
  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  endpoint_list endpoints_;
  steady::time_point start_;
  run_clock now_s_;
  std::vector<request_record> records_;
  // What is sent: the requests, a later turn's prompt filled in when the turn before ends (sized
  // once: a request in flight borrows its entry).
  std::vector<bench_request> sent_;
  std::vector<std::int64_t> next_turn_;  // by request: the index of its conversation's next turn
  std::deque<std::size_t> waiting_;
  std::size_t next_ = 0;
  std::int64_t in_flight_ = 0;
  std::size_t num_done_ = 0;
};

}  // namespace

std::vector<request_record> run_load(const load_config& config,
                                     const std::vector<bench_request>& requests,
                                     const std::vector<double>& arrival_s, std::ostream* progress) {
  if (requests.empty()) return {};
  return runner(config, requests, arrival_s, progress).run();
}

}  // namespace courier::bench_tool
