#include "gpu/cuda_emu/streams.hpp"

#include <algorithm>

#include <utility>

namespace courier::cuda_emu {

using lock = std::lock_guard<std::mutex>;

void work_tally::add(const work_tag& tag) {
  if (tag.kind < 0 || tag.kind >= work_kinds) return;
  ++calls[static_cast<std::size_t>(tag.kind)];
  bytes[static_cast<std::size_t>(tag.kind)] += tag.bytes;
}

void work_tally::add(const work_tally& more) {
  for (std::size_t k = 0; k < calls.size(); ++k) {
    calls[k] += more.calls[k];
    bytes[k] += more.bytes[k];
  }
}

stream_set::stream_set() {
  streams_.emplace_back();
}

int stream_set::create(bool non_blocking) {
  lock l(state_);
  streams_.emplace_back();
  streams_.back().non_blocking = non_blocking;
  return static_cast<int>(streams_.size() - 1);
}

bool stream_set::non_blocking(int s) const {
  lock l(state_);
  return at(s).non_blocking;
}

stream_set::stream& stream_set::at(int s) {
  if (s < 0 || s >= static_cast<int>(streams_.size())) {
    throw emu_error("cudaErrorInvalidResourceHandle: no stream " + std::to_string(s));
  }
  return streams_[static_cast<std::size_t>(s)];
}

const stream_set::stream& stream_set::at(int s) const {
  return const_cast<stream_set*>(this)->at(s);
}

void stream_set::refuse_in_capture(int s, const std::string& code, const std::string& what) const {
  at(s).invalidated = true;
  throw capture_error(code, what);
}

void stream_set::check_not_capturing(int s, const char* call) const {
  if (at(s).capturing) {
    refuse_in_capture(
        s, "cudaErrorStreamCaptureUnsupported",
        std::string(call) + " on stream " + std::to_string(s) + ", which is capturing");
  }
}

// The legacy stream encompasses the blocking streams: using it while one captures would make
// the capture depend on uncaptured work (the Guide: "any attempted use of the legacy stream is
// invalid").
void stream_set::refuse_implicit_capture() const {
  for (int o = 1; o < static_cast<int>(streams_.size()); ++o) {
    const stream& other = streams_[static_cast<std::size_t>(o)];
    if (other.capturing && !other.non_blocking) {
      refuse_in_capture(o, "cudaErrorStreamCaptureImplicit",
                        "the legacy stream used while blocking stream " + std::to_string(o) +
                            " captures (an implicit dependency)");
    }
  }
}

void stream_set::begin_capture(int s) {
  lock l(state_);
  if (s == 0) {
    throw capture_error("cudaErrorStreamCaptureUnsupported", "the legacy stream cannot capture");
  }
  stream& st = at(s);
  if (st.capturing) throw capture_error("cudaErrorIllegalState", "already capturing");
  st.capturing = true;
  st.invalidated = false;
  st.recorded = {};
}

stream_set::graph stream_set::end_capture(int s) {
  lock l(state_);
  stream& st = at(s);
  if (!st.capturing) throw capture_error("cudaErrorIllegalState", "not capturing");
  st.capturing = false;
  if (st.invalidated) {
    st.recorded = {};
    throw capture_error("cudaErrorStreamCaptureInvalidated",
                        "the capture on stream " + std::to_string(s) +
                            " was invalidated by a call refused while it captured");
  }
  return std::exchange(st.recorded, {});
}

bool stream_set::capturing(int s) const {
  lock l(state_);
  return at(s).capturing;
}

bool stream_set::capture_invalidated(int s) const {
  lock l(state_);
  return at(s).capturing && at(s).invalidated;
}

void stream_set::invalidate_capture(int s) {
  lock l(state_);
  if (at(s).capturing) at(s).invalidated = true;
}

bool stream_set::blocking_capture() const {
  lock l(state_);
  for (const stream& st : streams_) {
    if (st.capturing && !st.non_blocking) return true;
  }
  return false;
}

void stream_set::launch(int s, const graph& g) {
  lock l(state_);
  check_not_capturing(s, "cudaGraphLaunch");  // (a graph launched into a capture: not here)
  if (s == 0) refuse_implicit_capture();
  for (const auto& work : g.work) enqueue_locked(s, work);
  ++counts_.graph_launches;
  counts_.in_graphs.add(g.tally);
}

work_counts stream_set::counts() const {
  lock l(state_);
  return counts_;
}

stream_mark stream_set::enqueue(int s, std::function<void()> work, work_tag tag) {
  lock l(state_);
  const stream_mark m = enqueue_locked(s, std::move(work));
  (at(s).capturing ? at(s).recorded.tally : counts_.eager).add(tag);
  return m;
}

stream_mark stream_set::enqueue_locked(int s, std::function<void()> work) {
  if (at(s).capturing) {
    at(s).recorded.work.push_back(std::move(work));
    return {};
  }
  if (s == 0) refuse_implicit_capture();
  stream& st = at(s);
  item it{std::move(work), std::exchange(st.waits, {})};
  // The legacy stream and the blocking streams wait for what the others queued before.
  if (s == 0) {
    for (int o = 1; o < static_cast<int>(streams_.size()); ++o) {
      if (!streams_[static_cast<std::size_t>(o)].non_blocking) it.after.push_back(record_locked(o));
    }
  } else if (!st.non_blocking) {
    it.after.push_back(record_locked(0));
  }
  st.queued.push_back(std::move(it));
  return record_locked(s);
}

bool stream_set::run_next(const stream_mark& m) {
  std::vector<stream_mark> after;
  std::uint64_t i = 0;
  {
    lock l(state_);
    const stream& st = at(m.stream);
    if (st.ran >= m.count) return false;
    // Only this thread can be running (it holds run_): an item that is started and not
    // finished is one of its callers, waiting for itself.
    if (st.started > st.ran) throw emu_error("queued work waits for itself (a cycle)");
    i = st.ran;
    after = st.queued[i].after;
  }
  for (const stream_mark& before : after) run_to(before);
  std::function<void()> work;
  {
    lock l(state_);
    stream& st = at(m.stream);
    if (st.ran != i) return true;  // ran meanwhile (what it waited for ran it)
    work = std::move(st.queued[i].work);
    st.started = i + 1;
  }
  // Queries see the item unfinished while it runs (a host function may block); it counts as
  // run even if it throws.
  struct finish {
    stream_set* set;
    int s;
    std::uint64_t ran;
    ~finish() {
      lock l(set->state_);
      set->at(s).ran = ran;
    }
  } done{this, m.stream, i + 1};
  if (work) work();
  return true;
}

void stream_set::run_to(const stream_mark& m) {
  if (m.stream < 0) return;
  std::lock_guard<std::recursive_mutex> running(run_);
  struct depth {
    int& d;
    ~depth() { --d; }
  } leave{++running_depth_};
  if (running_depth_ > 10000) throw emu_error("streams wait for each other in a cycle");
  while (run_next(m)) {
  }
}

bool stream_set::run_ready() {
  std::unique_lock<std::recursive_mutex> running(run_, std::try_to_lock);
  if (!running.owns_lock() || running_depth_ > 0) return false;
  stream_mark next;
  {
    lock l(state_);
    for (int s = 0; s < static_cast<int>(streams_.size()) && next.stream < 0; ++s) {
      const stream& st = at(s);
      if (st.ran == st.queued.size()) continue;
      const std::vector<stream_mark>& after = st.queued[st.ran].after;
      const bool ready = std::all_of(after.begin(), after.end(), [&](const stream_mark& m) {
        return m.stream < 0 || at(m.stream).ran >= m.count;
      });
      if (ready) next = {s, st.ran + 1};
    }
  }
  if (next.stream < 0) return false;
  run_to(next);
  return true;
}

void stream_set::synchronize(int s) {
  stream_mark m;
  {
    lock l(state_);
    check_not_capturing(s, "cudaStreamSynchronize");
    if (s == 0) refuse_implicit_capture();
    m = record_locked(s);
  }
  run_to(m);
}

void stream_set::synchronize_all() {
  int count = 0;
  {
    lock l(state_);
    for (int s = 0; s < static_cast<int>(streams_.size()); ++s) {
      if (at(s).capturing) {
        refuse_in_capture(s, "cudaErrorStreamCaptureUnsupported",
                          "cudaDeviceSynchronize while stream " + std::to_string(s) + " captures");
      }
    }
    count = static_cast<int>(streams_.size());
  }
  for (int s = 0; s < count; ++s) synchronize(s);
}

void stream_set::run_all() {
  int count = 0;
  {
    lock l(state_);
    count = static_cast<int>(streams_.size());
  }
  for (int s = 0; s < count; ++s) run_to(record(s));
}

bool stream_set::idle(int s) const {
  lock l(state_);
  check_not_capturing(s, "cudaStreamQuery");
  if (s == 0) refuse_implicit_capture();
  return at(s).ran == at(s).queued.size();
}

stream_mark stream_set::record(int s) const {
  lock l(state_);
  return record_locked(s);
}

bool stream_set::done(const stream_mark& m) const {
  lock l(state_);
  return m.stream < 0 || at(m.stream).ran >= m.count;
}

void stream_set::wait(const stream_mark& m) {
  run_to(m);
}

void stream_set::wait_on(int s, const stream_mark& m) {
  lock l(state_);
  if (m.stream < 0 || at(s).capturing) return;  // (a capture's joins are not modelled)
  at(s).waits.push_back(m);
  enqueue_locked(s, nullptr);
}

std::uint64_t stream_set::ran(int s) const {
  lock l(state_);
  return at(s).ran;
}

}  // namespace courier::cuda_emu
