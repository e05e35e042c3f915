#pragma once
// A lane: named threads of its own that run posted jobs, off the actors and off CAF's pooled
// workers. The one way courier runs blocking or CPU-heavy work beside its actors: admission's
// text pool (parsing, templates, tokenizing), the engine's completion waiters (blocking on the
// device), the disk actor's I/O helpers. A job that has a result for an actor ends by sending
// it as a message; nothing else crosses back.
//
// Contract:
// - Jobs start in the order posted (with one thread, each after the one before has ended).
// - A job that throws is a bug of the job (jobs answer their own errors): the exception is
//   dropped and the thread goes on.
// - The destructor stops taking jobs, runs those already queued, and joins the threads.
// - run_all is fork-join: it must not be called from the lane's own threads.
// - Threads are named "<name>" (at most 15 bytes, as Linux keeps them) for ps, perf and gdb.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace courier::base {

class job_lane {
 public:
  // threads >= 1 (fewer is 1); on_thread_start (optional) runs first on each thread.
  job_lane(std::string name, int threads, std::function<void()> on_thread_start = {});
  ~job_lane();
  job_lane(const job_lane&) = delete;
  job_lane& operator=(const job_lane&) = delete;

  // Queues `job`; from any thread.
  void post(std::function<void()> job);
  // Runs jobs[0] on the calling thread and the others on the lane, and returns once every one
  // has ended.
  void run_all(std::vector<std::function<void()>> jobs);

  std::size_t num_queued() const;
  int num_threads() const { return static_cast<int>(threads_.size()); }
  const std::string& name() const { return name_; }

 private:
  void run(const std::function<void()>& on_thread_start);

  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: started once the state above exists
};

}  // namespace courier::base
