#pragma once
// A thread that blocks on the device for the engine, so that the engine's own thread never does:
// it runs posted jobs in order (each waits for a launched step and then tells the engine). The
// engine meanwhile takes its next plan from its mailbox and launches it behind the step running.
// Started at the first post; the destructor finishes the jobs posted and joins.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace courier::actors {

class completion_waiter {
 public:
  completion_waiter() = default;
  ~completion_waiter();
  completion_waiter(const completion_waiter&) = delete;
  completion_waiter& operator=(const completion_waiter&) = delete;

  void post(std::function<void()> job);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;  // last: started after the state above exists
};

}  // namespace courier::actors
