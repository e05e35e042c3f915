#pragma once
// Move-only owners of a CUDA stream and a CUDA event (noexcept moves; destroyed with their
// owner). Errors at creation throw through CUDA_CHECK.
#include <cuda_runtime_api.h>

#include <utility>

#include "gpu/cuda/cuda_check.hpp"

namespace courier::gpu::cuda {

class stream {
 public:
  stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  stream(stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  stream& operator=(stream&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  cudaStream_t get() const { return s_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;  // Owned.
};

// The calling thread's current device is `ordinal` for the scope, then what it was: a thread
// that waits for another GPU's work (the engine's completion waiter) keeps its own device.
class device_scope {
 public:
  explicit device_scope(int ordinal) {
    if (cudaGetDevice(&before_) != cudaSuccess) before_ = -1;
    if (before_ != ordinal) (void)cudaSetDevice(ordinal);  // a failure: the wait reports it
  }
  ~device_scope() {
    if (before_ >= 0) (void)cudaSetDevice(before_);
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int before_ = -1;
};

class event {
 public:
  // timing: whether elapsed_ms_since can measure to this event (off by default: cheaper).
  explicit event(bool timing = false) {
    CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event& operator=(event&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const { CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Whether the work recorded before it has run; never blocks. "Not ready" is no failure, but the
  // runtime keeps it as the thread's last error, which the next launcher's cudaGetLastError would
  // report as its own: it is cleared here (PyTorch clears it likewise). Another error counts as
  // done: waiting reports it.
  bool done() const {
    if (cudaEventQuery(e_) != cudaErrorNotReady) return true;
    (void)cudaGetLastError();
    return false;
  }
  // Milliseconds from `start` to this event: both made with timing, recorded, and this one
  // complete.
  float elapsed_ms_since(const event& start) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;  // Owned.
};

}  // namespace courier::gpu::cuda
