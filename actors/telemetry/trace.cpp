#include "actors/telemetry/trace.hpp"

#include <concurrentqueue/concurrentqueue.h>

#include <chrono>

namespace courier::telemetry {

namespace detail {
std::atomic<bool> tracing_on{false};
}

namespace {

// Never destroyed: thread_local producer tokens may outlive any owner we could give it.
moodycamel::ConcurrentQueue<span>& buffers() {
  static auto* q = new moodycamel::ConcurrentQueue<span>(4096);
  return *q;
}

std::atomic<std::uint64_t> sample_threshold{~0ULL};
std::atomic<std::size_t> max_spans{1u << 20};
std::atomic<std::uint64_t> dropped{0};
std::atomic<std::uint32_t> next_thread{1};

std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool sampled(std::uint64_t request) {
  const std::uint64_t t = sample_threshold.load(std::memory_order_relaxed);
  return request == 0 || t == ~0ULL || mix(request) < t;
}

namespace {

void enqueue(const span& s) {
  thread_local moodycamel::ProducerToken token(buffers());
  if (buffers().size_approx() >= max_spans.load(std::memory_order_relaxed) ||
      !buffers().enqueue(token, s)) {
    dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

void record(span s) {
  if (!tracing() || !sampled(s.request)) return;
  thread_local const std::uint32_t thread = next_thread.fetch_add(1);
  s.thread = thread;
  enqueue(s);
}

std::uint32_t new_track() { return next_thread.fetch_add(1); }

void record_on(span s, std::uint32_t track) {
  if (!tracing() || !sampled(s.request)) return;
  s.thread = track;
  enqueue(s);
}

void start_tracing(double sample, std::size_t max_buffered) {
  std::uint64_t t = ~0ULL;
  if (sample < 1.0) t = static_cast<std::uint64_t>(sample * 18446744073709551615.0);
  sample_threshold.store(t);
  max_spans.store(max_buffered);
  detail::tracing_on.store(true);
}

void stop_tracing() { detail::tracing_on.store(false); }

std::size_t drain(std::vector<span>& out, std::size_t max) {
  const std::size_t before = out.size();
  out.resize(before + max);
  const std::size_t n = buffers().try_dequeue_bulk(out.begin() + static_cast<std::ptrdiff_t>(before), max);
  out.resize(before + n);
  return n;
}

std::uint64_t take_dropped() { return dropped.exchange(0); }

}  // namespace courier::telemetry
