#pragma once
// Tensor parallelism's split of a Llama-family decoder across `size` ranks, as Megatron-LM
// splits it (and vLLM after it): column-parallel QKV and gate/up projections (each rank its
// heads and its share of the MLP's intermediate columns), row-parallel o_proj and down_proj
// (the matching input rows; an all-reduce of their outputs), and a vocab-parallel embedding and
// lm_head (each rank a range of vocabulary rows; an all-gather of the logits). Key/value heads
// are split when there are at least as many as ranks, else each is replicated on
// size / num_kv_heads ranks, so every rank holds the KV heads its query heads read (GQA).
// What the layout needs of the model is checked first (tp_refusal): a model that cannot be split
// so is refused with the reason, never split unevenly.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/model/model_config.hpp"

namespace courier::model {

// A range [begin, begin + count) along the dimension a weight is split on.
struct tp_range {
  std::int64_t begin = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return begin + count; }
};

struct tp_layout {
  std::int32_t rank = 0;
  std::int32_t size = 1;
  tp_range q_heads;    // query heads: q_proj's output rows / head_dim, o_proj's input columns
  tp_range kv_heads;   // key/value heads: k_proj's and v_proj's rows / head_dim; the KV cache's
  tp_range ffn;        // gate/up rows, down_proj's columns
  tp_range vocab;      // embedding and lm_head rows
  tp_range mamba_heads;   // a hybrid's Mamba-2 heads: z, x and dt of in_proj, A, D, dt_bias,
                          // the gated norm, out_proj's input columns, the states
  tp_range mamba_groups;  // its B/C groups (each rank's heads read only its own groups)
  std::int32_t kv_replicas = 1;  // ranks holding each KV head (1: split)
  // Ranks sharing each B/C group (1: the groups split): with fewer groups than ranks, each
  // group's B and C are on size / n_groups consecutive ranks, whose heads read it, and its gated
  // norm's variance is summed over them (vLLM replicates a single group the same way).
  std::int32_t mamba_group_ranks = 1;
};

// Why `cfg` cannot be split across `size` ranks (empty: it can): size under 1; query heads,
// key/value heads (or their replication), the MLP's intermediate size or the vocabulary (the
// logits' all-gather takes equal shares) not dividing evenly; a hybrid's Mamba-2 heads not
// dividing evenly, or its B/C groups neither dividing evenly across the ranks nor the ranks
// across them.
std::string tp_refusal(const model_config& cfg, std::int32_t size);

// A hybrid's Mamba-2 in_proj rows the rank of `l` holds, in the checkpoint's numbering and the
// rank's order: its parts of z, x, B, C and dt (the weights and a LoRA adapter's B alike).
std::vector<tp_range> mamba_in_proj_rows(const model_config& cfg, const tp_layout& l);

// Rank `rank`'s share; throws std::invalid_argument naming the reason when tp_refusal is not
// empty or rank is not in [0, size).
tp_layout tp_layout_for(const model_config& cfg, std::int32_t rank, std::int32_t size);

}  // namespace courier::model
