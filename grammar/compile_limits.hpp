#pragma once
// What compiling one grammar may cost: every stage (JSON Schema to GBNF, parsing GBNF or a
// regular expression, inlining, lowering, the DFAs' construction and minimization, the checks)
// charges one compile_budget, and throws grammar_error with `limit` set ("work", "memory" or
// "time") the moment a charge passes its limit, so an untrusted grammar costs at most about
// max_time_ms of a thread and max_memory_bytes of the compiler's own data, never a hang or an OOM.
// The compiler also refuses a grammar whose decoding steps would be unbounded (limit "branches",
// below).
//
// Work is counted in steps of the compiler's inner loops (a node copied, an NFA edge byte
// bucketed, a DFA transition compared), about 1-5 ns each. Memory is an estimate of what the
// compiler holds (expression nodes, GBNF text, rules, NFA and DFA states, elements): bytes are
// charged when allocated and released when a stage frees them; the limit is on what is held.
// Time is the CPU time the compiling thread has spent since the budget was made (checked every
// few thousand steps): the backstop for a slow machine or a stage that undercounts its work. Not
// wall time: on a loaded machine, or on a low-priority thread, a grammar that waits for the CPU
// is not refused for the wait. One budget, one thread. Under AddressSanitizer the limit is
// scaled by 30 (the same work runs that much slower there; compile_limits.cpp).
#include <chrono>
#include <cstdint>

namespace courier::grammar {

struct compile_limits {
  std::uint64_t max_work = std::uint64_t{1} << 28;  // steps: ~0.3-0.8 s of one core
  std::uint64_t max_memory_bytes = 100ull << 20;    // 100 MiB
  std::uint64_t max_time_ms = 1000;
  // Not a cost of compiling but of every decoding step after: the most parse stacks one
  // position of the compiled grammar may start at once (an alternation of this many objects, a
  // repeat of a part that can match nothing this many times). Each costs the mask cache a walk
  // of the vocabulary (~5-30 ms on 150k tokens) the first time it is reached. Limit "branches".
  std::uint64_t max_branches = 512;
};

// One grammar's compilation: pass the same budget to each stage (json_schema_to_gbnf, then
// compile_gbnf) so that the limits hold for the whole. Not thread-safe: one compilation, one
// thread.
class compile_budget {
 public:
  explicit compile_budget(const compile_limits& limits = {});

  // Throws grammar_error (limit "work", or "time" when the clock is past max_time_ms).
  void charge_work(std::uint64_t steps) {
    work_ += steps;
    if (work_ > limits_.max_work) fail_work();
    if (work_ >= next_clock_check_) check_clock();
  }
  // Throws grammar_error (limit "memory") when what is held passes max_memory_bytes.
  void charge_memory(std::uint64_t bytes) {
    memory_ += bytes;
    if (memory_ > peak_memory_) peak_memory_ = memory_;
    if (memory_ > limits_.max_memory_bytes) fail_memory();
  }
  // Bytes charged before and now freed.
  void release_memory(std::uint64_t bytes) { memory_ -= bytes < memory_ ? bytes : memory_; }

  const compile_limits& limits() const { return limits_; }
  std::uint64_t work() const { return work_; }
  std::uint64_t memory() const { return memory_; }
  std::uint64_t peak_memory() const { return peak_memory_; }
  double elapsed_ms() const;  // the thread's CPU time since the budget was made

 private:
  [[noreturn]] void fail_work() const;
  [[noreturn]] void fail_memory() const;
  void check_clock();

  compile_limits limits_;
  double start_cpu_ms_ = 0;
  std::uint64_t work_ = 0;
  std::uint64_t next_clock_check_ = 0;
  std::uint64_t memory_ = 0;
  std::uint64_t peak_memory_ = 0;
};

}  // namespace courier::grammar
