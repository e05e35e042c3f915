#include "gpu/sim/host_collectives.hpp"

#include <algorithm>
#include <stdexcept>

namespace courier::gpu {

host_collectives::host_collectives(std::int32_t size)
    : size_(size), ptrs_(static_cast<std::size_t>(size > 0 ? size : 0), nullptr) {
  if (size < 1) throw std::invalid_argument("host_collectives: at least one rank");
}

void host_collectives::abort(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(m_);
    aborted_ = why.empty() ? "aborted" : why;
  }
  cv_.notify_all();
}

void host_collectives::publish(std::int32_t rank, const float* p) {
  if (rank < 0 || rank >= size_) throw std::invalid_argument("host_collectives: no such rank");
  std::lock_guard<std::mutex> lock(m_);
  ptrs_[static_cast<std::size_t>(rank)] = p;
}

void host_collectives::wait_all() {
  std::unique_lock<std::mutex> lock(m_);
  if (!aborted_.empty()) throw std::runtime_error("collective aborted: " + aborted_);
  const std::uint64_t gen = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != gen || !aborted_.empty(); });
  if (generation_ == gen) throw std::runtime_error("collective aborted: " + aborted_);
}

void host_collectives::all_reduce_sum(std::int32_t rank, float* data, std::size_t n) {
  publish(rank, data);
  wait_all();  // every rank's buffer is published
  std::vector<float> sum(ptrs_[0], ptrs_[0] + n);
  for (std::size_t r = 1; r < ptrs_.size(); ++r) {
    const float* p = ptrs_[r];
    for (std::size_t i = 0; i < n; ++i) sum[i] += p[i];
  }
  wait_all();  // every rank has read every buffer: each may write its own
  std::copy(sum.begin(), sum.end(), data);
}

void host_collectives::all_gather(std::int32_t rank, const float* in, std::size_t n, float* out) {
  publish(rank, in);
  wait_all();
  for (std::size_t r = 0; r < ptrs_.size(); ++r) std::copy(ptrs_[r], ptrs_[r] + n, out + r * n);
  wait_all();  // no rank's `in` is changed while another still reads it
}

}  // namespace courier::gpu
