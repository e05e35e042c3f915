#include "gpu/model/kv_cache.hpp"

namespace courier::model {

std::size_t kv_cache::block_bytes(const model_config& cfg, std::int32_t block_size,
                                  gpu::dtype type) {
  return 2 * static_cast<std::size_t>(cfg.kv_layers()) * block_size * cfg.num_kv_heads *
         cfg.head_dim * gpu::dtype_size(type);
}

kv_cache::kv_cache(gpu::device& dev, const model_config& cfg, std::int32_t num_blocks,
                   std::int32_t block_size)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      num_kv_heads_(cfg.num_kv_heads),
      head_dim_(cfg.head_dim),
      type_(dev.compute_dtype()) {
  const std::size_t bytes = static_cast<std::size_t>(num_blocks) * block_size * num_kv_heads_ *
                            head_dim_ * gpu::dtype_size(type_);
  for (std::int32_t l = 0; l < cfg.kv_layers(); ++l) {
    k_.push_back(dev.allocate(bytes));
    v_.push_back(dev.allocate(bytes));
  }
}

gpu::kv_cache_view kv_cache::layer(std::int32_t i) const {
  return {k_[i].data(), v_[i].data(), type_, num_blocks_, block_size_, num_kv_heads_, head_dim_};
}

}  // namespace courier::model
