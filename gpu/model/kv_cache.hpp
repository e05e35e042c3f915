#pragma once
// The paged KV cache of one model on one device: per layer with attention (every layer, or a
// hybrid's attention layers: model_config::kv_layers), K and V pages of block_size slots.
// It only holds memory; which sequence owns which block is cache/'s and the scheduler's business.
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/model_config.hpp"

namespace courier::model {

class kv_cache {
 public:
  kv_cache(gpu::device& dev, const model_config& cfg, std::int32_t num_blocks,
           std::int32_t block_size);

  std::int32_t num_blocks() const { return num_blocks_; }
  std::int32_t block_size() const { return block_size_; }
  gpu::kv_cache_view layer(std::int32_t i) const;

  // Bytes one block takes over all layers (K and V).
  static std::size_t block_bytes(const model_config& cfg, std::int32_t block_size,
                                 gpu::dtype type);

  // The host tier: n blocks of host memory the device copies to and from (allocate_host: pinned
  // on CUDA), each every layer's K then V page of one block; returns their bytes.
  std::size_t reserve_host(std::int32_t n);
  std::int32_t host_blocks() const { return host_blocks_; }
  // The host tier's memory (block b at b * host_block_bytes()), shared with the KV disk tier's
  // I/O, which copies blocks the scheduler hands it between here and disk.
  std::shared_ptr<void> host_memory() const { return host_; }
  std::size_t host_block_bytes() const { return 2 * k_.size() * page_bytes_; }
  // Copies device block `block` to host block `host_block` (to_host) or back, every layer, in
  // stream order; std::invalid_argument when either is out of range.
  void copy_block(std::int32_t block, std::int32_t host_block, bool to_host);
  // copy_block for each of `copies`, on the device's copy stream (device::copy_async): after
  // everything enqueued so far, beside what is enqueued later. Checks every copy's range before
  // enqueuing any (std::invalid_argument).
  struct host_copy {
    std::int32_t block = 0, host_block = 0;
    bool to_host = false;
  };
  std::shared_ptr<gpu::pending_copies> copy_blocks_async(const std::vector<host_copy>& copies);

 private:
  void check_copy(std::int32_t block, std::int32_t host_block) const;
  // The spans of one block's copy, every layer's K then V page (the host block's layout).
  void spans_of(const host_copy& c, std::vector<gpu::copy_span>& out) const;

  gpu::device& dev_;
  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::int32_t num_kv_heads_;
  std::int32_t head_dim_;
  gpu::dtype type_;
  std::vector<gpu::device_buffer> k_;  // Owned, one per layer.
  std::vector<gpu::device_buffer> v_;
  std::size_t page_bytes_ = 0;  // one block of one layer's K (or V)
  std::shared_ptr<void> host_;
  std::int32_t host_blocks_ = 0;
};

}  // namespace courier::model
