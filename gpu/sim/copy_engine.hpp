#pragma once
// The sim's copy stream (device::copy_async): one thread that runs copy batches in the order they
// are enqueued, each no sooner than `latency` after it was enqueued (a simulated transfer, so
// tests can hold copies in flight while steps run beside them). The sim's compute ops are done
// when their call returns, so a batch enqueued after them starts after them, as copy_async
// requires.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/device.hpp"

namespace courier::gpu::sim {

class copy_engine {
 public:
  explicit copy_engine(std::chrono::microseconds latency);
  ~copy_engine();  // runs what is queued, then stops
  copy_engine(const copy_engine&) = delete;
  copy_engine& operator=(const copy_engine&) = delete;

  std::shared_ptr<pending_copies> enqueue(std::vector<copy_span> spans);

 private:
  struct batch;
  void loop();

  std::chrono::microseconds latency_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<batch>> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is built
};

}  // namespace courier::gpu::sim
