#pragma once
// Admission runs on CAF's pooled workers (request actors relaying tokens, responses, scrapes)
// and on the admission server's text threads (parsing, chat templates, tokenizing). The
// generation loop runs on threads of its own (the scheduler and the engine are detached actors;
// the sim backend has its compute pool). This hook lowers the CPU priority (raises the nice
// value) of each pooled worker as it starts, and `courier serve` does the same on the text
// threads, so that on a loaded machine the kernel gives the generation loop the CPU first: a
// flood of large requests slows admission, not the streams already running.
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
// Raises this thread's nice value by `by` (at most to 19). Needs no privilege; a failure is
// harmless (the thread keeps its priority).
void lower_current_thread_priority(int by);
// Moves this thread to SCHED_IDLE (Linux): it runs only on CPU time that no normal thread wants,
// and a waking normal thread preempts it at once and may be placed on its CPU as on an idle one
// (nice 19 still takes a share and delays wake-ups). One-way without privilege. Returns false
// (and changes nothing) where the kernel refuses.
bool run_current_thread_when_idle();

}  // namespace courier::actors
