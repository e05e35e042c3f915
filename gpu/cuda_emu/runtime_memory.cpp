// The runtime's memory functions (runtime.cpp has the rules every call follows): device and
// pinned allocations, copies and memsets, each checked against where its pointers live and run
// as the Runtime API's "Stream synchronization behavior" says, as late as it allows.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "gpu/cuda_emu/runtime_context.hpp"

namespace courier::cuda_emu::rt {

namespace {

struct place {
  bool device = false;
  bool pinned = false;  // host memory from cudaHostAlloc
};

// Where [p, p + bytes) lives: a device's if it starts inside one of its allocations (and then it
// must end inside it too), host memory otherwise.
place locate(const void* p, std::size_t bytes) {
  if (p == nullptr) fail(error::invalid_value, "a null pointer");
  for (const auto& d : ctx().dev) {
    if (!d->memory.owns(p, 1)) continue;
    if (!d->memory.owns(p, bytes)) fail(error::invalid_value, "a range past its allocation");
    return {true, false};
  }
  return {false, ctx().pinned.owns(p, 1)};
}

// The device an allocation's start belongs to, or nullptr.
device_state* device_holding(const void* p) {
  for (const auto& d : ctx().dev) {
    if (d->memory.owns(p, 1)) return d.get();
  }
  return nullptr;
}

// A copy's direction, checked against where its pointers live: cudaMemcpyDefault infers it;
// an explicit kind that does not match (which the Runtime API leaves undefined) is refused.
cudaMemcpyKind checked_kind(cudaMemcpyKind kind, const place& dst, const place& src) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    fail(error::invalid_memcpy_direction);
  }
  const auto inferred = static_cast<cudaMemcpyKind>((src.device ? 2 : 0) + (dst.device ? 1 : 0));
  if (kind != cudaMemcpyDefault && kind != inferred) {
    fail(error::invalid_value, "the copy's kind does not match where its pointers live");
  }
  return inferred;
}

cudaMemcpyKind checked_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            place* src_place = nullptr) {
  const place d = locate(dst, bytes), s = locate(src, bytes);
  if (src_place != nullptr) *src_place = s;
  return checked_kind(kind, d, s);
}

// The bytes a memset may write: device memory, or pinned host memory.
place checked_memset(void* p, std::size_t bytes) {
  const place where = locate(p, bytes);
  if (!where.device && !where.pinned) fail(error::invalid_value, "memset of pageable memory");
  return where;
}

// Queued work that touches device memory checks, when it runs, that the ranges it was given at
// the call are still allocated: a graph replays its copies long after capture, and a GPU faults
// on memory freed since. The fault is the device's sticky cudaErrorIllegalAddress (the least
// convenient of what may happen), said on stderr; the work does nothing.
bool still_allocated(int device, const void* p, std::size_t bytes, const place& at_call) {
  if (!at_call.device || bytes == 0) return true;
  device_state* d = device_holding(p);
  if (d != nullptr && d->memory.owns(p, bytes)) return true;
  std::fprintf(stderr,
               "courier cuda emulator: queued work on device %d touches %zu bytes at %p, freed "
               "since it was queued (cudaErrorIllegalAddress)\n",
               device, bytes, p);
  ctx().errors.returned(device, error::illegal_address);
  return false;
}

void copy_rows(char* dst, std::size_t dpitch, const char* src, std::size_t spitch,
               std::size_t width, std::size_t height) {
  for (std::size_t r = 0; r < height; ++r) std::memcpy(dst + r * dpitch, src + r * spitch, width);
}

}  // namespace

}  // namespace courier::cuda_emu::rt

using namespace courier::cuda_emu;
using namespace courier::cuda_emu::rt;

extern "C" {

cudaError_t cudaMalloc(void** devPtr, std::size_t size) {
  return call([&] {
    unsafe_during_capture("cudaMalloc");
    return current().memory.allocate(devPtr, size);
  });
}

// cudaFree "may perform implicit synchronization": it runs the allocation's device's queued
// work first, so none of it reads freed memory.
cudaError_t cudaFree(void* devPtr) {
  return call([&] {
    if (devPtr == nullptr) return error::success;
    unsafe_during_capture("cudaFree");
    device_state* d = device_holding(devPtr);
    if (d == nullptr) return error::invalid_value;
    d->streams.run_all();
    return d->memory.release(devPtr);
  });
}

cudaError_t cudaHostAlloc(void** pHost, std::size_t size, unsigned int flags) {
  return call([&] {
    if ((flags & ~unsigned{cudaHostAllocPortable | cudaHostAllocMapped |
                           cudaHostAllocWriteCombined}) != 0) {
      fail(error::invalid_value, "unknown flags");
    }
    unsafe_during_capture("cudaHostAlloc");
    return ctx().pinned.allocate(pHost, size);
  });
}

cudaError_t cudaMallocHost(void** ptr, std::size_t size) {
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

// No synchronization is documented: the memory goes at once (queued work still reading it is
// reported under AddressSanitizer).
cudaError_t cudaFreeHost(void* ptr) {
  return call([&] {
    if (ptr == nullptr) return error::success;
    unsafe_during_capture("cudaFreeHost");
    return ctx().pinned.release(ptr);
  });
}

// The documented synchronous copy: from pageable host memory to the device, the source is staged
// at the call (after a sync of the legacy stream) and the device written later; device to
// device returns at once; the rest return once the copy has run.
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
  return call([&] {
    if (count == 0) return;
    unsafe_during_capture("cudaMemcpy");
    place from;
    const cudaMemcpyKind k = checked_copy(dst, src, count, kind, &from);
    const stream_ref legacy{current_device(), 0};
    stream_set& streams = current().streams;
    if (k == cudaMemcpyHostToDevice && !from.pinned) {
      streams.synchronize(0);
      auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                        static_cast<const char*>(src) + count);
      queue(
          legacy, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); },
          copy_tag(k, count));
      return;
    }
    const stream_mark m = queue(
        legacy, [=] { std::memcpy(dst, src, count); }, copy_tag(k, count));
    if (k != cudaMemcpyDeviceToDevice) streams.wait(m);
  });
}

// Fully asynchronous (the source read when the copy runs), except host to host, which the
// Runtime API makes synchronous.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    if (count == 0) return;
    const place d = locate(dst, count), from = locate(src, count);
    const cudaMemcpyKind k = checked_kind(kind, d, from);
    const stream_mark m = queue(
        s,
        [=] {
          if (still_allocated(s.device, dst, count, d) &&
              still_allocated(s.device, src, count, from)) {
            std::memcpy(dst, src, count);
          }
        },
        copy_tag(k, count));
    if (k == cudaMemcpyHostToHost) streams_of(s.device).wait(m);
  });
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    if (width > dpitch || width > spitch) fail(error::invalid_pitch_value);
    if (width == 0 || height == 0) return;
    const place d = locate(dst, (height - 1) * dpitch + width);
    const place from = locate(src, (height - 1) * spitch + width);
    const cudaMemcpyKind k = checked_kind(kind, d, from);
    auto* out = static_cast<char*>(dst);
    const auto* in = static_cast<const char*>(src);
    const std::size_t dst_bytes = (height - 1) * dpitch + width;
    const std::size_t src_bytes = (height - 1) * spitch + width;
    queue(
        s,
        [=] {
          if (still_allocated(s.device, out, dst_bytes, d) &&
              still_allocated(s.device, in, src_bytes, from)) {
            copy_rows(out, dpitch, in, spitch, width, height);
          }
        },
        copy_tag(k, width * height));
  });
}

// Asynchronous with respect to the host for device memory (the Runtime API: "except when the
// target is pinned host memory"): a read before a wait sees the old bytes.
cudaError_t cudaMemset(void* devPtr, int value, std::size_t count) {
  return call([&] {
    if (count == 0) return;
    const place where = checked_memset(devPtr, count);
    const stream_mark m = queue({current_device(), 0}, [=] { std::memset(devPtr, value, count); },
                                {courierEmuMemset, count});
    if (where.pinned) current().streams.wait(m);
  });
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, std::size_t count, cudaStream_t stream) {
  return call([&] {
    const stream_ref s = stream_of(stream);
    if (count == 0) return;
    const place where = checked_memset(devPtr, count);
    queue(s,
          [=] {
            if (still_allocated(s.device, devPtr, count, where)) std::memset(devPtr, value, count);
          },
          {courierEmuMemset, count});
  });
}

cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total) {
  return call([&] {
    if (free == nullptr || total == nullptr) fail(error::invalid_value);
    *free = current().memory.free_bytes();
    *total = current().memory.total_bytes();
  });
}

// Not CUDA's (runtime_api.hpp): the emulated libraries' check of a device range.
int courierEmuDeviceRange(int device, const void* p, std::size_t bytes, const char* fault) {
  if (!is_device(device)) return 0;
  if (device_at(device).memory.owns(p, bytes == 0 ? 1 : bytes)) {
    return 1;
  }
  if (fault != nullptr) {
    std::fprintf(stderr,
                 "courier cuda emulator: %s on device %d touches %zu bytes at %p, not allocated "
                 "there (cudaErrorIllegalAddress)\n",
                 fault, device, bytes, p);
    ctx().errors.returned(device, error::illegal_address);
  }
  return 0;
}

}  // extern "C"
