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
        records_(requests.size()) {}

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
    while (next_ < requests_.size() && arrival_s_[next_] <= now) admit(next_++);
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
    start_stream_request(io_, endpoints_, config_.client, requests_[i], now_s_,
                         [this, i](request_record rec) { on_finished(i, std::move(rec)); });
  }

  void on_finished(std::size_t i, request_record rec) {
    records_[i] = std::move(rec);
    --in_flight_;
    ++num_done_;
    report_progress();
    if (!waiting_.empty()) {
      const std::size_t j = waiting_.front();
      waiting_.pop_front();
      launch(j);
    }
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
