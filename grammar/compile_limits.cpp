#include "grammar/compile_limits.hpp"

#include <fmt/format.h>

#include "grammar/grammar_error.hpp"

namespace courier::grammar {

namespace {

// Steps between two reads of the clock (a read costs about as much as 10 steps).
constexpr std::uint64_t clock_check_interval = 4096;

}  // namespace

compile_budget::compile_budget(const compile_limits& limits)
    : limits_(limits),
      start_(std::chrono::steady_clock::now()),
      next_clock_check_(clock_check_interval) {}

double compile_budget::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
      .count();
}

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
  if (elapsed_ms() > static_cast<double>(limits_.max_time_ms)) {
    throw grammar_error(
        fmt::format("grammar: takes more than {} ms to compile", limits_.max_time_ms), "time");
  }
}

}  // namespace courier::grammar
