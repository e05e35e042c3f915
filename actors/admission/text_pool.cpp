#include "actors/admission/text_pool.hpp"

#include <algorithm>
#include <utility>

namespace courier::admission {

text_pool::text_pool(int threads, std::function<void()> on_thread_start) {
  threads = std::max(threads, 1);
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, on_thread_start] { run(on_thread_start); });
  }
}

text_pool::~text_pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void text_pool::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

std::size_t text_pool::num_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

void text_pool::run(const std::function<void()>& on_thread_start) {
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

int text_pool_threads(int configured) {
  if (configured > 0) return configured;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 4);
}

}  // namespace courier::admission
