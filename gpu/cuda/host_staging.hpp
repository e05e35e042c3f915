#pragma once
// Pinned host memory for the copies a step makes while the step before still runs. A
// cudaMemcpyAsync from pageable memory may synchronize with the stream to stage the copy (CUDA's
// "API synchronization behavior"), which would make the host wait for the step in flight; from
// pinned memory it never does. Used by the engine thread only.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/cuda/cuda_stream.hpp"

namespace courier::gpu::cuda {

// Host-to-device copies through a ring of pinned segments: upload() copies src into the current
// segment and enqueues the copy from there, so src may be reused at once and the call never
// waits for the stream, except when the ring wraps onto a segment whose copies have not run
// (segments - 1 segments of uploads ahead of the device). A copy larger than a segment goes
// through the ring a segment at a time.
class upload_ring {
 public:
  upload_ring(std::size_t segment_bytes, int segments);
  ~upload_ring();
  upload_ring(const upload_ring&) = delete;
  upload_ring& operator=(const upload_ring&) = delete;

  void upload(void* dst, const void* src, std::size_t n, cudaStream_t stream);

 private:
  void stage(char* dst, const char* src, std::size_t n, cudaStream_t stream);  // n <= a segment

  struct segment {
    event done;  // recorded after the last copy out of the segment
    std::size_t used = 0;
  };
  char* host_ = nullptr;  // Owned (cudaFreeHost): segments * segment_bytes_.
  std::size_t segment_bytes_;
  std::vector<segment> segments_;
  std::size_t current_ = 0;
};

// Pinned blocks for device-to-host results, handed out and given back from any thread (a
// pending result may be released by the engine's completion waiter). Blocks are kept for reuse.
class pinned_pool : public std::enable_shared_from_this<pinned_pool> {
 public:
  ~pinned_pool();
  // A block of at least `bytes`, given back to the pool when the returned pointer is destroyed.
  std::shared_ptr<void> acquire(std::size_t bytes);
  // Makes `count` blocks of `bytes` ready, so that steps within the limits allocate none.
  void reserve(std::size_t bytes, int count);

 private:
  std::mutex mu_;
  std::vector<std::pair<void*, std::size_t>> free_;  // Owned (cudaFreeHost).
};

}  // namespace courier::gpu::cuda
