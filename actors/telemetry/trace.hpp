#pragma once
// The actor trace: every actor records a span per message it handles into a per-thread,
// lock-free buffer (a moodycamel queue with one producer token per thread, so recording never
// takes a lock or contends with another thread); the telemetry actor drains the buffers into the
// trace file. No prompt or output tokens and no text are ever recorded: ids, counts and times.
//
// Off (the default), recording costs one relaxed atomic load per handled message. Spans that
// carry a request id are kept for a `sample` fraction of request ids (all of one request's spans,
// or none); spans without a request id (steps, reports) are always kept while tracing is on.
// When the buffers hold max_buffered spans, further spans are dropped and counted.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace courier::telemetry {

struct span {
  std::int64_t start_ns = 0;     // steady clock
  std::int64_t duration_ns = 0;
  std::uint64_t request = 0;     // 0: none
  std::uint64_t step = 0;        // 0: none
  const char* actor = "";        // static strings only
  const char* message = "";
  std::uint32_t thread = 0;      // small per-process thread number, set by record()
  std::int32_t rows = 0;
  std::int32_t prefill = 0;      // prefill tokens
  std::int32_t decode = 0;       // decode rows
  std::int32_t drafts = 0;       // speculative draft tokens fed
  std::int32_t accepted = 0;     // of those, accepted
};

std::int64_t now_ns();

namespace detail {
extern std::atomic<bool> tracing_on;
}

// Whether spans are being recorded (cheap: call it before building a span).
inline bool tracing() { return detail::tracing_on.load(std::memory_order_relaxed); }
// Whether a span of this request is kept under the sampling ratio (request 0: always).
bool sampled(std::uint64_t request);

// Records a span (when tracing and sampled); never blocks. Its `thread` is the calling thread's.
void record(span s);
// A lane of its own for spans that are not one thread's handling (the device's steps, which
// the engine records when it sees them done): a number no thread has.
std::uint32_t new_track();
// Records `s` on `track` (from new_track) instead of the calling thread's lane.
void record_on(span s, std::uint32_t track);

// Turns recording on or off for the whole process (the telemetry actor does this).
void start_tracing(double sample, std::size_t max_buffered);
void stop_tracing();
// Moves up to max buffered spans into out; returns how many.
std::size_t drain(std::vector<span>& out, std::size_t max);
// Spans dropped since the previous call.
std::uint64_t take_dropped();

// Records the time from construction to destruction as one span. Set fields through ->.
class scoped_span {
 public:
  scoped_span(const char* actor, const char* message, std::uint64_t request = 0,
              std::uint64_t step = 0) {
    if (!tracing() || !sampled(request)) return;
    active_ = true;
    s_.actor = actor;
    s_.message = message;
    s_.request = request;
    s_.step = step;
    s_.start_ns = now_ns();
  }
  ~scoped_span() {
    if (!active_) return;
    s_.duration_ns = now_ns() - s_.start_ns;
    record(s_);
  }
  scoped_span(const scoped_span&) = delete;
  scoped_span& operator=(const scoped_span&) = delete;

  bool active() const { return active_; }
  void cancel() { active_ = false; }
  span* operator->() { return &s_; }

 private:
  bool active_ = false;
  span s_;
};

}  // namespace courier::telemetry
