#include "base/job_lane.hpp"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace courier::base {

job_lane::job_lane(std::string name, int threads, std::function<void()> on_thread_start)
    : name_(std::move(name)) {
  threads = std::max(threads, 1);
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, on_thread_start] { run(on_thread_start); });
  }
}

job_lane::~job_lane() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void job_lane::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void job_lane::run_all(std::vector<std::function<void()>> jobs) {
  if (jobs.empty()) return;
  std::mutex done_mu;
  std::condition_variable done_cv;
  std::size_t left = jobs.size() - 1;
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    post([&, job = std::move(jobs[i])] {
      try {
        job();
      } catch (...) {  // as any job's: dropped; the count must still go down
      }
      std::lock_guard<std::mutex> lock(done_mu);
      if (--left == 0) done_cv.notify_one();
    });
  }
  try {
    jobs[0]();
  } catch (...) {
  }
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return left == 0; });
}

std::size_t job_lane::num_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

void job_lane::run(const std::function<void()>& on_thread_start) {
  pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  if (on_thread_start) on_thread_start();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (...) {  // jobs answer their own errors; this only keeps the thread alive
    }
  }
}

}  // namespace courier::base
