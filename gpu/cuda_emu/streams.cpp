#include "gpu/cuda_emu/streams.hpp"

#include <utility>


namespace courier::cuda_emu {

stream_set::stream_set() { streams_.emplace_back(); }

int stream_set::create(bool non_blocking) {
  streams_.emplace_back();
  streams_.back().non_blocking = non_blocking;
  return static_cast<int>(streams_.size() - 1);
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

void stream_set::refuse_in_capture(int s, const std::string& code,
                                   const std::string& what) const {
  at(s).invalidated = true;
  throw capture_error(code, what);
}

void stream_set::check_not_capturing(int s, const char* call) const {
  if (at(s).capturing) {
    refuse_in_capture(s, "cudaErrorStreamCaptureUnsupported",
                      std::string(call) + " on stream " + std::to_string(s) +
                          ", which is capturing");
  }
}

void stream_set::begin_capture(int s) {
  if (s == 0) {
    throw capture_error("cudaErrorStreamCaptureUnsupported", "the legacy stream cannot capture");
  }
  stream& st = at(s);
  if (st.capturing) throw capture_error("cudaErrorIllegalState", "already capturing");
  st.capturing = true;
  st.invalidated = false;
  st.recorded.clear();
}

stream_set::graph stream_set::end_capture(int s) {
  stream& st = at(s);
  if (!st.capturing) throw capture_error("cudaErrorIllegalState", "not capturing");
  st.capturing = false;
  if (st.invalidated) {
    st.recorded.clear();
    throw capture_error("cudaErrorStreamCaptureInvalidated",
                        "the capture on stream " + std::to_string(s) +
                            " was invalidated by a call refused while it captured");
  }
  return std::exchange(st.recorded, {});
}

bool stream_set::capturing(int s) const { return at(s).capturing; }

void stream_set::launch(int s, const graph& g) {
  check_not_capturing(s, "cudaGraphLaunch");  // (a graph launched into a capture: not here)
  for (const auto& work : g) enqueue(s, work);
}

void stream_set::enqueue(int s, std::function<void()> work) {
  if (at(s).capturing) {
    at(s).recorded.push_back(std::move(work));
    return;
  }
  if (s == 0) {
    for (int o = 1; o < static_cast<int>(streams_.size()); ++o) {
      const stream& other = streams_[static_cast<std::size_t>(o)];
      if (other.capturing && !other.non_blocking) {
        refuse_in_capture(o, "cudaErrorStreamCaptureImplicit",
                          "work on the legacy stream while blocking stream " +
                              std::to_string(o) + " captures (an implicit dependency)");
      }
    }
  }
  stream& st = at(s);
  item it{std::move(work), std::exchange(st.waits, {})};
  // The legacy stream and the blocking streams wait for what the others queued before.
  if (s == 0) {
    for (int o = 1; o < static_cast<int>(streams_.size()); ++o) {
      if (!streams_[static_cast<std::size_t>(o)].non_blocking) it.after.push_back(record(o));
    }
  } else if (!st.non_blocking) {
    it.after.push_back(record(0));
  }
  at(s).queued.push_back(std::move(it));
}

void stream_set::run_to(const stream_mark& m) {
  if (m.stream < 0) return;
  if (++running_depth_ > 100000) throw emu_error("streams wait for each other in a cycle");
  while (at(m.stream).ran < m.count) {
    const std::uint64_t i = at(m.stream).ran;
    const std::vector<stream_mark> after = at(m.stream).queued[i].after;
    for (const stream_mark& before : after) run_to(before);
    stream& st = at(m.stream);  // (work may have queued more: no reference kept across it)
    if (st.ran != i) continue;  // ran meanwhile
    std::function<void()> work = std::move(st.queued[i].work);
    ++st.ran;
    if (work) work();
  }
  --running_depth_;
}

void stream_set::synchronize(int s) {
  check_not_capturing(s, "cudaStreamSynchronize");
  run_to(record(s));
}

void stream_set::synchronize_all() {
  for (int s = 0; s < static_cast<int>(streams_.size()); ++s) {
    if (at(s).capturing) {
      refuse_in_capture(s, "cudaErrorStreamCaptureUnsupported",
                        "cudaDeviceSynchronize while stream " + std::to_string(s) +
                            " captures");
    }
  }
  for (int s = 0; s < static_cast<int>(streams_.size()); ++s) synchronize(s);
}

bool stream_set::idle(int s) const {
  check_not_capturing(s, "cudaStreamQuery");
  return at(s).ran == at(s).queued.size();
}

stream_mark stream_set::record(int s) const { return {s, at(s).queued.size()}; }

bool stream_set::done(const stream_mark& m) const {
  return m.stream < 0 || at(m.stream).ran >= m.count;
}

void stream_set::wait(const stream_mark& m) { run_to(m); }

void stream_set::wait_on(int s, const stream_mark& m) {
  if (m.stream >= 0) at(s).waits.push_back(m);
}

std::uint64_t stream_set::ran(int s) const { return at(s).ran; }

}  // namespace courier::cuda_emu
