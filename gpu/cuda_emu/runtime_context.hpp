#pragma once
// The emulated runtime's state, shared by runtime*.cpp (library courier_cuda_emu_runtime; not
// an API of its own): the devices COURIER_CUDA_EMU_DEVICES names, each with its memory and its
// streams, the pinned host allocations, the error state, and the tables that turn the runtime's
// handles (streams, events, graphs) into the emulator's objects.
//
// Locks: `handles` guards the tables and is held only to look up or change them, never while
// queued work runs; each device's stream_set has its own locks (streams.hpp), so a host function
// that blocks while device d's work runs holds nothing another device's thread needs.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "gpu/cuda_emu/device.hpp"
#include "gpu/cuda_emu/errors.hpp"
#include "gpu/cuda_emu/memory.hpp"
#include "gpu/cuda_emu/streams.hpp"

namespace courier::cuda_emu::rt {

struct device_state {
  explicit device_state(const device_profile& p) : memory(p.global_memory) {}
  device_memory memory;
  stream_set streams;
};

struct stream_ref {  // a cudaStream_t resolved: its device and its id in that device's set
  int device = 0;
  int id = 0;
};

struct event_record {  // one cudaEventRecord
  int device = 0;
  stream_mark mark;
  bool captured = false;  // recorded on a capturing stream (`stream`): not work that runs
  int stream = 0;
  std::atomic<std::int64_t> ran_ns{-1};  // steady_clock, when the work before it had run
};

struct event_info {
  int device = 0;
  unsigned flags = 0;
  std::shared_ptr<event_record> last;  // nullptr until recorded
};

struct capture_info {  // a capture sequence, for the capture modes' rules
  int device = 0;
  int stream = 0;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
};

using graph_ptr = std::shared_ptr<const stream_set::graph>;

struct context {
  context();  // reads COURIER_CUDA_EMU_DEVICES

  std::string init_failure;  // non-empty: every call fails with cudaErrorInitializationError
  std::unique_ptr<devices> devs;
  std::vector<std::unique_ptr<device_state>> dev;
  error_state errors;
  device_memory pinned;  // cudaHostAlloc's allocations (host memory, tracked)

  std::mutex handles;  // the tables below
  std::map<cudaStream_t, stream_ref> streams;
  std::map<cudaEvent_t, event_info> events;
  std::map<cudaGraph_t, graph_ptr> graphs;
  std::map<cudaGraphExec_t, graph_ptr> execs;
  std::vector<capture_info> captures;
  std::uintptr_t next_handle = 0x1000;
};

context& ctx();

// A fresh handle value (never dereferenced; callers hold `handles`).
template <class H>
H new_handle() {
  ctx().next_handle += 16;
  return reinterpret_cast<H>(ctx().next_handle);
}

cudaError_t as_cuda(error e);
int current_device();
// Whether `device` is one of the emulated devices (none when the runtime failed to start).
bool is_device(int device);
device_state& device_at(int device);
device_state& current();
inline stream_set& streams_of(int device) {
  return device_at(device).streams;
}

// Ends the running call with `e` (an emu_error carrying the runtime's name for it).
[[noreturn]] void fail(error e, const std::string& why = "");

// One runtime call: refused inside queued work (a host function may not call the runtime:
// cudaErrorNotPermitted) and on a device with a sticky error; what the emulator's parts throw
// turned into the runtime's codes; the result recorded in the error state and returned.
// `device`: the one whose sticky error the call returns (-1: the current device).
cudaError_t run_call(const std::function<error()>& body, int device = -1);
template <class F>
cudaError_t call(F&& body, int device = -1) {
  return run_call(
      [&]() -> error {
        if constexpr (std::is_void_v<decltype(body())>) {
          body();
          return error::success;
        } else {
          return body();
        }
      },
      device);
}

// nullptr and cudaStreamLegacy: the current device's legacy stream; an unknown handle:
// cudaErrorInvalidResourceHandle.
stream_ref stream_of(cudaStream_t s);
// Queues `work` on `s`, marked as queued work (the runtime refuses calls from inside it), and
// counted as `tag` says (courierEmuGetWorkCounts).
stream_mark queue(const stream_ref& s, std::function<void()> work, work_tag tag = {});
// A copy's tag: its direction and bytes.
work_tag copy_tag(cudaMemcpyKind kind, std::size_t bytes);
// The capture modes (cudaStreamCaptureMode): a potentially unsafe call (an allocation, a free,
// a synchronous copy) while a capture prohibits it for this thread fails with
// cudaErrorStreamCaptureUnsupported and invalidates the captures that prohibit it.
void unsafe_during_capture(const char* call);

}  // namespace courier::cuda_emu::rt
