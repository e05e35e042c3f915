#include "grammar/compile_limits.hpp"

#include <fmt/format.h>
#include <time.h>

#include "grammar/grammar_error.hpp"

namespace courier::grammar {

namespace {

// Steps between two reads of the clock (a read costs about as much as 10 steps).
constexpr std::uint64_t clock_check_interval = 4096;

// Under AddressSanitizer (the sanitizer and fuzz builds) the compiler does the same work 10-30
// times slower: the time backstop is scaled by this there, so that it stays a backstop. The work
// and memory limits, which do not depend on speed, hold unchanged in every build.
#if defined(__SANITIZE_ADDRESS__)
constexpr double time_scale = 30;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr double time_scale = 30;
#else
constexpr double time_scale = 1;
#endif
#else
constexpr double time_scale = 1;
#endif

// The calling thread's CPU time in ms: what compiling costs the machine, whatever else runs
// (a thread that waits for the CPU on a loaded machine is not charged for the wait).
double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

}  // namespace

compile_budget::compile_budget(const compile_limits& limits)
    : limits_(limits), start_cpu_ms_(thread_cpu_ms()), next_clock_check_(clock_check_interval) {}

double compile_budget::elapsed_ms() const { return thread_cpu_ms() - start_cpu_ms_; }

void compile_budget::fail_work() const {
  throw grammar_error(
      fmt::format("grammar: too complex to compile (over {} steps of work)", limits_.max_work),
      "work");
}

void compile_budget::fail_memory() const {
  throw grammar_error(fmt::format("grammar: needs more than {} MB to compile",
                                  (limits_.max_memory_bytes + (1u << 20) - 1) >> 20),
                      "memory");
}

void compile_budget::check_clock() {
  next_clock_check_ = work_ + clock_check_interval;
  if (elapsed_ms() > static_cast<double>(limits_.max_time_ms) * time_scale) {
    throw grammar_error(
        fmt::format("grammar: takes more than {} ms of CPU to compile", limits_.max_time_ms),
        "time");
  }
}

}  // namespace courier::grammar
