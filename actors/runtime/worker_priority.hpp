#pragma once
// CAF's pooled workers run admission: parsing, chat templates, tokenizing, detokenizing and
// writing responses. The generation loop runs on threads of its own (the scheduler and the
// engine are detached actors; the sim backend has its compute pool). This hook lowers the CPU
// priority (raises the nice value) of each pooled worker as it starts, so that on a loaded
// machine the kernel gives the generation loop the CPU first: a flood of large requests slows
// admission, not the streams already running.
#include <caf/thread_hook.hpp>

namespace courier::actors {

class worker_priority_hook : public caf::thread_hook {
 public:
  explicit worker_priority_hook(int nice) : nice_(nice) {}
  void init(caf::actor_system&) override {}
  // Runs on each new CAF thread; acts on the pooled workers only (CAF names them
  // "caf.multiplexer"), not on the clock or detached actors' threads.
  void thread_started() override;
  void thread_terminates() override {}

 private:
  int nice_;
};

// This thread's nice value (Linux: per thread).
int current_thread_nice();

}  // namespace courier::actors
