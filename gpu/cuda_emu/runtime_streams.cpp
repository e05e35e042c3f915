// The runtime's stream, event and host-function calls (runtime.cpp has the rules every call
// follows), on each device's stream_set.
#include <chrono>
#include <cstdio>

#include "gpu/cuda_emu/runtime_context.hpp"

namespace courier::cuda_emu::rt {

namespace {

event_info event_of(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(ctx().handles);
  const auto it = ctx().events.find(e);
  if (it == ctx().events.end()) fail(error::invalid_resource_handle, "not a live event");
  return it->second;
}

// The Guide: querying or synchronizing an event recorded in a capture is invalid (and
// invalidates the capture, as synchronizing its stream does).
void refuse_captured(const event_record& r) {
  if (!r.captured) return;
  streams_of(r.device).invalidate_capture(r.stream);
  fail(error::captured_event, "an event recorded in a capture");
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waiting, on `s`, for an event of another device: the work queued there runs the other
// device's marked work (on the thread that runs this stream's).
void wait_across_devices(const stream_ref& s, const event_record& r) {
  queue(s, [device = r.device, mark = r.mark] { streams_of(device).wait(mark); });
}

}  // namespace

}  // namespace courier::cuda_emu::rt

using namespace courier::cuda_emu;
using namespace courier::cuda_emu::rt;

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return call([&] {
    if (pStream == nullptr || (flags & ~unsigned{cudaStreamNonBlocking}) != 0) {
      fail(error::invalid_value);
    }
    const stream_ref s{current_device(), current().streams.create(flags != 0)};
    std::lock_guard<std::mutex> lock(ctx().handles);
    *pStream = new_handle<cudaStream_t>();
    ctx().streams.emplace(*pStream, s);
  });
}

// The handle goes at once; work still queued on the stream runs when waited for (the device
// finishes it, as the Runtime API says).
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return call([&] {
    if (stream == nullptr || stream == cudaStreamLegacy) fail(error::invalid_resource_handle);
    const stream_ref s = stream_of(stream);
    // (the capture would be left without its stream: refused, the API not saying)
    if (streams_of(s.device).capturing(s.id)) fail(error::illegal_state, "a capturing stream");
    std::lock_guard<std::mutex> lock(ctx().handles);
    ctx().streams.erase(stream);
  });
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    streams_of(s.device).synchronize(s.id);
  });
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    return streams_of(s.device).idle(s.id) ? error::success : error::not_ready;
  });
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    const event_info e = event_of(event);
    if (flags != cudaEventWaitDefault) fail(error::invalid_value, "flags not emulated");
    if (!e.last) return;  // never recorded: nothing to wait for
    const event_record& r = *e.last;
    const bool capturing = streams_of(s.device).capturing(s.id);
    if (r.captured) {
      if (capturing && r.device == s.device && r.stream == s.id) return;  // stream order
      fail(error::not_supported, "a capture joined through events is not emulated");
    }
    if (capturing) {  // the Guide: a capture may not wait for uncaptured work
      streams_of(s.device).invalidate_capture(s.id);
      fail(error::stream_capture_isolation);
    }
    if (r.device == s.device) {
      streams_of(s.device).wait_on(s.id, r.mark);
    } else {
      wait_across_devices(s, r);
    }
  });
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return call([&] {
    if (fn == nullptr) fail(error::invalid_value);
    queue(stream_of(stream), [fn, userData] { fn(userData); }, {courierEmuHostFunction, 0});
  });
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return call([&] {
    if (event == nullptr ||
        (flags & ~unsigned{cudaEventBlockingSync | cudaEventDisableTiming}) != 0) {
      fail(error::invalid_value);
    }
    std::lock_guard<std::mutex> lock(ctx().handles);
    *event = new_handle<cudaEvent_t>();
    ctx().events.emplace(*event, event_info{current_device(), flags, nullptr});
  });
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return call([&] {
    event_of(event);
    std::lock_guard<std::mutex> lock(ctx().handles);
    ctx().events.erase(event);
  });
}

// The event marks the work its stream has queued, a time stamp taken when that work has run
// (queued after it); on a capturing stream it marks a point of the capture instead.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    if (event_of(event).device != s.device) {
      fail(error::invalid_resource_handle, "an event and a stream of different devices");
    }
    auto r = std::make_shared<event_record>();
    r->device = s.device;
    r->stream = s.id;
    if (streams_of(s.device).capturing(s.id)) {
      r->captured = true;
    } else {
      r->mark = queue(s, [r] { r->ran_ns = now_ns(); });
    }
    std::lock_guard<std::mutex> lock(ctx().handles);
    const auto it = ctx().events.find(event);
    if (it != ctx().events.end()) it->second.last = r;
  });
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  return call([&] {
    const event_info e = event_of(event);
    if (!e.last) return error::success;
    refuse_captured(*e.last);
    return streams_of(e.last->device).done(e.last->mark) ? error::success : error::not_ready;
  });
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return call([&] {
    const event_info e = event_of(event);
    if (!e.last) return;
    refuse_captured(*e.last);
    streams_of(e.last->device).wait(e.last->mark);
  });
}

// The time between the moments the two events' work had run on the host (steady_clock): real
// milliseconds of the emulation, monotonic, nothing like a GPU's.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return call([&] {
    if (ms == nullptr) fail(error::invalid_value);
    const event_info a = event_of(start), b = event_of(end);
    if (((a.flags | b.flags) & cudaEventDisableTiming) != 0 || !a.last || !b.last) {
      fail(error::invalid_resource_handle, "an event without timing, or never recorded");
    }
    refuse_captured(*a.last);
    refuse_captured(*b.last);
    const std::int64_t t0 = a.last->ran_ns, t1 = b.last->ran_ns;
    if (t0 < 0 || t1 < 0) return error::not_ready;
    *ms = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
    return error::success;
  });
}

// Not CUDA's (streams.hpp, stream_set::run_ready): runs ready work of `device` as that device
// would by itself. For the emulated NCCL, from inside queued work, where runtime calls are
// refused: so not a call(); a failure in that work is the device's sticky launch failure.
int courierEmuRunReady(int device) {
  if (!is_device(device)) return 0;
  try {
    return streams_of(device).run_ready() ? 1 : 0;
  } catch (const emu_error& e) {
    std::fprintf(stderr, "courier cuda emulator: device %d's work failed: %s\n", device, e.what());
    ctx().errors.returned(device, error::launch_failure);
    return 0;
  }
}

// Not CUDA's (stream_set::counts): not a call() either, so that a profile reads the counts of
// a device with a sticky error too.
int courierEmuGetWorkCounts(int device, courierEmuWorkCounts* out) {
  static_assert(courierEmuWorkKinds == work_kinds);
  if (out == nullptr || !is_device(device)) return -1;
  const work_counts c = streams_of(device).counts();
  for (int k = 0; k < work_kinds; ++k) {
    const auto i = static_cast<std::size_t>(k);
    out->eager.calls[k] = c.eager.calls[i];
    out->eager.bytes[k] = c.eager.bytes[i];
    out->in_graphs.calls[k] = c.in_graphs.calls[i];
    out->in_graphs.bytes[k] = c.in_graphs.bytes[i];
  }
  out->graph_launches = c.graph_launches;
  return 0;
}

}  // extern "C"
