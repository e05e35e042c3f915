#pragma once
// A device's memory in the emulator: host memory, tracked per allocation, as cudaMalloc,
// cudaFree and cudaMemGetInfo describe it. An allocation is aligned to 256 bytes (the
// Programming Guide: "always aligned to at least 256 bytes") and starts as 0xCD bytes (CUDA
// leaves it uninitialized); past the device's capacity cudaMalloc fails with
// cudaErrorMemoryAllocation; freeing what is not a live allocation is cudaErrorInvalidValue.
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "gpu/cuda_emu/errors.hpp"

namespace courier::cuda_emu {

class device_memory {
 public:
  explicit device_memory(std::size_t capacity) : capacity_(capacity) {}
  ~device_memory();
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;

  // cudaMalloc: *out the allocation (nullptr for 0 bytes), or the error.
  error allocate(void** out, std::size_t bytes);
  // cudaFree: nullptr does nothing.
  error release(void* p);
  // cudaMemGetInfo.
  std::size_t free_bytes() const;
  std::size_t total_bytes() const { return capacity_; }
  // Whether [p, p + bytes) lies inside the bytes asked for by one live allocation (a copy or a
  // kernel may touch them; the rest of its last 256-byte unit not).
  bool owns(const void* p, std::size_t bytes) const;

 private:
  struct allocation {
    std::unique_ptr<unsigned char[]> storage;  // with room to align
    std::size_t bytes = 0;    // asked for: what a copy or kernel may touch
    std::size_t charged = 0;  // in whole 256-byte units
  };
  std::size_t capacity_;
  std::size_t used_ = 0;
  mutable std::mutex mutex_;
  std::map<const unsigned char*, allocation> live_;  // by aligned start
};

}  // namespace courier::cuda_emu
