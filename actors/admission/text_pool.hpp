#pragma once
// Admission's CPU-heavy work runs here: parsing request bodies, rendering chat templates,
// tokenizing (POST /v1/completions, /v1/chat/completions, /tokenize, /detokenize). A few threads
// of its own, never CAF's pooled workers: those relay every running request's tokens to its
// stream, and a flood of large bodies must not hold them (bench/victim-stream.sh). The
// composition root lowers these threads' CPU priority (`on_thread_start`), so on a loaded
// machine the generation loop gets the CPU first.
//
// Jobs run in the order posted. The destructor stops taking jobs, runs those already queued (each
// ends its request: a response or an actor that will send one) and joins the threads.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace courier::admission {

class text_pool {
 public:
  // threads >= 1; on_thread_start (optional) runs first on each thread.
  explicit text_pool(int threads, std::function<void()> on_thread_start = {});
  ~text_pool();
  text_pool(const text_pool&) = delete;
  text_pool& operator=(const text_pool&) = delete;

  // Queues `job`; from any thread. A job that throws is a bug: the exception is dropped.
  void post(std::function<void()> job);
  std::size_t num_queued() const;
  int num_threads() const { return static_cast<int>(threads_.size()); }

 private:
  void run(const std::function<void()>& on_thread_start);

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// server.admission_threads as configured (0: automatic) to a thread count: a quarter of the
// machine's hardware threads, at least 1.
int text_pool_threads(int configured);

}  // namespace courier::admission
