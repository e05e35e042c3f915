#include "gpu/sim/copy_engine.hpp"

#include <cstring>

namespace courier::gpu::sim {

struct copy_engine::batch final : pending_copies {
  std::vector<copy_span> spans;
  std::chrono::steady_clock::time_point due;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;

  bool ready() override {
    std::lock_guard<std::mutex> lock(mu);
    return done;
  }
  void wait() override {
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [this] { return done; });
  }
};

copy_engine::copy_engine(std::chrono::microseconds latency)
    : latency_(latency), thread_([this] { loop(); }) {}

copy_engine::~copy_engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

std::shared_ptr<pending_copies> copy_engine::enqueue(std::vector<copy_span> spans) {
  auto b = std::make_shared<batch>();
  b->spans = std::move(spans);
  b->due = std::chrono::steady_clock::now() + latency_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(b);
  }
  wake_.notify_one();
  return b;
}

void copy_engine::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::shared_ptr<batch> b = queue_.front();
    queue_.pop_front();
    lock.unlock();
    std::this_thread::sleep_until(b->due);
    for (const copy_span& c : b->spans) {
      if (c.n > 0) std::memmove(c.dst, c.src, c.n);
    }
    {
      std::lock_guard<std::mutex> done_lock(b->mu);
      b->done = true;
    }
    b->done_cv.notify_all();
    lock.lock();
  }
}

}  // namespace courier::gpu::sim
