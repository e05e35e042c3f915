#include "gpu/model/kv_cache.hpp"

#include <stdexcept>
#include <string>

namespace courier::model {

std::size_t kv_cache::block_bytes(const model_config& cfg, std::int32_t block_size,
                                  gpu::dtype type) {
  return 2 * static_cast<std::size_t>(cfg.kv_layers()) * block_size * cfg.num_kv_heads *
         cfg.head_dim * gpu::dtype_size(type);
}

kv_cache::kv_cache(gpu::device& dev, const model_config& cfg, std::int32_t num_blocks,
                   std::int32_t block_size)
    : dev_(dev),
      num_blocks_(num_blocks),
      block_size_(block_size),
      num_kv_heads_(cfg.num_kv_heads),
      head_dim_(cfg.head_dim),
      type_(dev.compute_dtype()) {
  page_bytes_ = static_cast<std::size_t>(block_size) * num_kv_heads_ * head_dim_ *
                gpu::dtype_size(type_);
  const std::size_t bytes = static_cast<std::size_t>(num_blocks) * page_bytes_;
  for (std::int32_t l = 0; l < cfg.kv_layers(); ++l) {
    k_.push_back(dev.allocate(bytes));
    v_.push_back(dev.allocate(bytes));
  }
}

std::size_t kv_cache::reserve_host(std::int32_t n) {
  if (n <= 0) return 0;
  const std::size_t bytes = static_cast<std::size_t>(n) * 2 * k_.size() * page_bytes_;
  host_ = dev_.allocate_host(bytes);
  host_blocks_ = n;
  return bytes;
}

void kv_cache::check_copy(std::int32_t block, std::int32_t host_block) const {
  if (block < 0 || block >= num_blocks_ || host_block < 0 || host_block >= host_blocks_) {
    throw std::invalid_argument("kv cache: a copy between block " + std::to_string(block) +
                                " and host block " + std::to_string(host_block) +
                                " is out of range (" + std::to_string(num_blocks_) + " blocks, " +
                                std::to_string(host_blocks_) + " host blocks)");
  }
}

void kv_cache::spans_of(const host_copy& c, std::vector<gpu::copy_span>& out) const {
  auto* host = static_cast<unsigned char*>(host_.get()) +
               static_cast<std::size_t>(c.host_block) * 2 * k_.size() * page_bytes_;
  const std::size_t at = static_cast<std::size_t>(c.block) * page_bytes_;
  for (std::size_t l = 0; l < k_.size(); ++l) {
    for (const gpu::device_buffer* buf : {&k_[l], &v_[l]}) {
      auto* page = static_cast<unsigned char*>(buf->data()) + at;
      if (c.to_host) {
        out.push_back({host, page, page_bytes_});
      } else {
        out.push_back({page, host, page_bytes_});
      }
      host += page_bytes_;
    }
  }
}

void kv_cache::copy_block(std::int32_t block, std::int32_t host_block, bool to_host) {
  check_copy(block, host_block);
  std::vector<gpu::copy_span> spans;
  spans_of({block, host_block, to_host}, spans);
  for (const gpu::copy_span& c : spans) dev_.copy_device(c.dst, c.src, c.n);
}

std::shared_ptr<gpu::pending_copies> kv_cache::copy_blocks_async(
    const std::vector<host_copy>& copies) {
  for (const host_copy& c : copies) check_copy(c.block, c.host_block);
  std::vector<gpu::copy_span> spans;
  spans.reserve(copies.size() * 2 * k_.size());
  for (const host_copy& c : copies) spans_of(c, spans);
  return dev_.copy_async(std::move(spans));
}

gpu::kv_cache_view kv_cache::layer(std::int32_t i) const {
  return {k_[i].data(), v_[i].data(), type_, num_blocks_, block_size_, num_kv_heads_, head_dim_};
}

}  // namespace courier::model
