#include "gpu/model/tensor_parallel.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace courier::model {

std::string tp_refusal(const model_config& cfg, std::int32_t size) {
  if (size < 1) return fmt::format("a tensor-parallel size of {} (at least 1)", size);
  if (size == 1) return {};
  if (cfg.hybrid() && cfg.mamba.num_heads % size != 0) {
    return fmt::format("{} Mamba-2 heads do not split evenly across {} ranks",
                       cfg.mamba.num_heads, size);
  }
  const std::int32_t groups = cfg.mamba.n_groups;
  if (cfg.hybrid() && (groups >= size ? groups % size != 0 : size % groups != 0)) {
    return fmt::format(
        "{} Mamba-2 groups (n_groups) neither split evenly across {} ranks nor replicate evenly "
        "on them",
        groups, size);
  }
  if (cfg.num_heads % size != 0) {
    return fmt::format("{} attention heads do not split evenly across {} ranks", cfg.num_heads,
                       size);
  }
  const std::int32_t kv = cfg.num_kv_heads;
  if (kv < 1) return "no key/value heads";
  if (kv >= size ? kv % size != 0 : size % kv != 0) {
    return fmt::format(
        "{} key/value heads neither split evenly across {} ranks nor replicate evenly on them",
        kv, size);
  }
  if (cfg.intermediate_size % size != 0) {
    return fmt::format("the MLP's intermediate size {} does not split evenly across {} ranks",
                       cfg.intermediate_size, size);
  }
  if (cfg.vocab_size % size != 0) {  // checkpoints pad theirs (128256, 151936, 152064)
    return fmt::format("a vocabulary of {} tokens does not split evenly across {} ranks",
                       cfg.vocab_size, size);
  }
  return {};
}

std::vector<tp_range> mamba_in_proj_rows(const model_config& cfg, const tp_layout& l) {
  const mamba_config& mc = cfg.mamba;
  const std::int64_t inter = mc.intermediate();
  const std::int64_t GN = static_cast<std::int64_t>(mc.n_groups) * mc.state_size;
  const tp_range ch{l.mamba_heads.begin * mc.head_dim, l.mamba_heads.count * mc.head_dim};
  const tp_range b{l.mamba_groups.begin * mc.state_size, l.mamba_groups.count * mc.state_size};
  return {ch, {inter + ch.begin, ch.count}, {2 * inter + b.begin, b.count},
          {2 * inter + GN + b.begin, b.count},
          {2 * inter + 2 * GN + l.mamba_heads.begin, l.mamba_heads.count}};
}

tp_layout tp_layout_for(const model_config& cfg, std::int32_t rank, std::int32_t size) {
  const std::string why = tp_refusal(cfg, size);
  if (!why.empty()) throw std::invalid_argument("tensor parallelism: " + why);
  if (rank < 0 || rank >= size) {
    throw std::invalid_argument(
        fmt::format("tensor parallelism: rank {} of {} ranks", rank, size));
  }
  tp_layout l;
  l.rank = rank;
  l.size = size;
  const std::int64_t q = cfg.num_heads / size;
  l.q_heads = {rank * q, q};
  const std::int32_t kv = cfg.num_kv_heads;
  if (kv >= size) {
    const std::int64_t per = kv / size;
    l.kv_heads = {rank * per, per};
  } else {  // each KV head on size / kv consecutive ranks: those whose query heads read it
    l.kv_replicas = size / kv;
    l.kv_heads = {rank / l.kv_replicas, 1};
  }
  const std::int64_t f = cfg.intermediate_size / size;
  l.ffn = {rank * f, f};
  const std::int64_t v = cfg.vocab_size / size;
  l.vocab = {rank * v, v};
  if (cfg.hybrid()) {
    const std::int64_t mh = cfg.mamba.num_heads / size;
    l.mamba_heads = {rank * mh, mh};
    const std::int32_t groups = cfg.mamba.n_groups;
    if (groups >= size) {
      const std::int64_t mg = groups / size;
      l.mamba_groups = {rank * mg, mg};
    } else {  // the heads' group: heads per rank divide heads per group (both divide evenly)
      l.mamba_group_ranks = size / groups;
      l.mamba_groups = {rank / l.mamba_group_ranks, 1};
    }
  }
  return l;
}

}  // namespace courier::model
