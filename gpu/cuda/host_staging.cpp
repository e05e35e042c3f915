#include "gpu/cuda/host_staging.hpp"

#include <algorithm>
#include <cstring>

#include "gpu/cuda/cuda_check.hpp"

namespace courier::gpu::cuda {

upload_ring::upload_ring(std::size_t segment_bytes, int segments)
    : segment_bytes_(segment_bytes), segments_(static_cast<std::size_t>(segments)) {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, segment_bytes_ * segments_.size(), cudaHostAllocDefault));
  host_ = static_cast<char*>(p);
}

upload_ring::~upload_ring() {
  if (host_) cudaFreeHost(host_);
}

// Every byte passes through the ring, at most a segment at a time: a copy from pageable memory
// may read its source after the call has returned (the Runtime API's "API synchronization
// behavior": such a copy "might be synchronous"), so src could not be reused at once.
void upload_ring::upload(void* dst, const void* src, std::size_t n, cudaStream_t stream) {
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  while (n > 0) {
    const std::size_t piece = std::min(n, segment_bytes_);
    stage(out, in, piece, stream);
    out += piece;
    in += piece;
    n -= piece;
  }
}

void upload_ring::stage(char* dst, const char* src, std::size_t n, cudaStream_t stream) {
  if (segments_[current_].used + n > segment_bytes_) {
    current_ = (current_ + 1) % segments_.size();
    segment& next = segments_[current_];
    next.done.synchronize();  // its copies have run (at once when never recorded)
    next.used = 0;
  }
  segment& s = segments_[current_];
  char* staged = host_ + current_ * segment_bytes_ + s.used;
  std::memcpy(staged, src, n);
  CUDA_CHECK(cudaMemcpyAsync(dst, staged, n, cudaMemcpyHostToDevice, stream));
  s.done.record(stream);
  s.used += (n + 63) / 64 * 64;
}

pinned_pool::~pinned_pool() {
  for (const auto& [p, bytes] : free_) cudaFreeHost(p);
}

std::shared_ptr<void> pinned_pool::acquire(std::size_t bytes) {
  void* block = nullptr;
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= bytes) {
        block = it->first;
        size = it->second;
        free_.erase(it);
        break;
      }
    }
  }
  if (!block) {
    size = bytes > 0 ? bytes : 1;
    CUDA_CHECK(cudaHostAlloc(&block, size, cudaHostAllocDefault));
  }
  std::shared_ptr<pinned_pool> self = shared_from_this();
  return std::shared_ptr<void>(block, [self, size](void* p) {
    std::lock_guard<std::mutex> lock(self->mu_);
    self->free_.emplace_back(p, size);
  });
}

void pinned_pool::reserve(std::size_t bytes, int count) {
  std::vector<std::shared_ptr<void>> held;  // acquired together, so each is a distinct block
  for (int i = 0; i < count; ++i) held.push_back(acquire(bytes));
}

}  // namespace courier::gpu::cuda
