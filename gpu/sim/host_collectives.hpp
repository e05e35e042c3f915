#pragma once
// Collectives among `size` ranks that are threads of one process: the sim backend's stand-in
// for NCCL, so that tensor parallelism runs here with N simulated devices. Every rank makes the
// same calls in the same order with the same sizes; a call returns once every rank has made it.
// Sums are taken in rank order, so every rank gets the same floats whatever the threads' timing
// (NCCL's ring order differs: tensor-parallel results are compared with the fixtures'
// tolerance, not bit for bit, across sizes). abort() makes every call waiting or to come throw,
// so a rank that fails leaves none of the others waiting forever.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace courier::gpu {

class host_collectives {
 public:
  explicit host_collectives(std::int32_t size);
  host_collectives(const host_collectives&) = delete;
  host_collectives& operator=(const host_collectives&) = delete;

  std::int32_t size() const { return size_; }
  // data (n floats on each rank) becomes the sum over the ranks, element by element.
  void all_reduce_sum(std::int32_t rank, float* data, std::size_t n);
  // out (size * n floats) becomes every rank's `in` (n floats), in rank order.
  void all_gather(std::int32_t rank, const float* in, std::size_t n, float* out);
  // Every call waiting now or made later throws std::runtime_error with `why`.
  void abort(const std::string& why);

 private:
  void publish(std::int32_t rank, const float* p);
  void wait_all();  // a barrier of the size_ ranks

  const std::int32_t size_;
  std::mutex m_;
  std::condition_variable cv_;
  std::int32_t arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::string aborted_;  // empty: not aborted
  std::vector<const float*> ptrs_;  // each rank's buffer in the call under way
};

}  // namespace courier::gpu
