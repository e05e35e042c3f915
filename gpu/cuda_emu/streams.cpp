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

void stream_set::enqueue(int s, std::function<void()> work) {
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

void stream_set::synchronize(int s) { run_to(record(s)); }

void stream_set::synchronize_all() {
  for (int s = 0; s < static_cast<int>(streams_.size()); ++s) synchronize(s);
}

bool stream_set::idle(int s) const { return at(s).ran == at(s).queued.size(); }

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
