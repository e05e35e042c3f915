#pragma once
// A fixed pool of CPU threads for the sim backend's ops. Written here rather than using OpenMP
// because the pool must be per device (sized by device.sim.threads), must sleep (not spin) between
// ops so that it leaves the 2-core CI machine to the actors and the HTTP thread, and must split
// work the same way every time.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace courier::gpu::sim {

class thread_pool {
 public:
  // threads <= 0: hardware concurrency. The calling thread also works, so `threads` workers
  // means threads - 1 pool threads.
  explicit thread_pool(int threads);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over [0, n) split into chunks of at least `grain` items; returns when
  // all chunks are done. Not reentrant: one parallel_for at a time per pool.
  void parallel_for(std::int64_t n, std::int64_t grain,
                    const std::function<void(std::int64_t, std::int64_t)>& fn);

 private:
  void worker_loop();
  void run_chunks(std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;  // Borrowed for a call.
  std::int64_t n_ = 0;
  std::int64_t chunk_ = 1;
  std::int64_t next_ = 0;          // next chunk start; guarded by mu_
  int busy_ = 0;                   // workers inside the current job
  std::uint64_t generation_ = 0;   // bumps once per parallel_for
  bool stop_ = false;
};

}  // namespace courier::gpu::sim
