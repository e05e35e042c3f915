#include "gpu/sim/thread_pool.hpp"

#include <algorithm>

namespace courier::gpu::sim {

thread_pool::thread_pool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::run_chunks(std::unique_lock<std::mutex>& lock) {
  // Called with mu_ held; releases it while running each chunk, holds it again on return.
  while (next_ < n_) {
    const std::int64_t begin = next_;
    const std::int64_t end = std::min(n_, begin + chunk_);
    next_ = end;
    lock.unlock();
    (*job_)(begin, end);
    lock.lock();
  }
}

void thread_pool::worker_loop() {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    ++busy_;
    run_chunks(lock);
    if (--busy_ == 0) done_.notify_all();
  }
}

void thread_pool::parallel_for(std::int64_t n, std::int64_t grain,
                               const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  const std::int64_t parts = std::min<std::int64_t>(size() * 4, (n + grain - 1) / grain);
  if (parts <= 1 || workers_.empty()) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  job_ = &fn;
  n_ = n;
  chunk_ = (n + parts - 1) / parts;
  next_ = 0;
  ++generation_;
  wake_.notify_all();
  run_chunks(lock);
  done_.wait(lock, [&] { return busy_ == 0 && next_ >= n_; });
  job_ = nullptr;
}

}  // namespace courier::gpu::sim
