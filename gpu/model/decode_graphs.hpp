#pragma once
// Decode steps as graphs (device::capture; CUDA graphs on the CUDA backend), for llama_model
// (enable_graphs). A graph fixes every pointer, size and plan it was captured with, so a graph
// step differs from an eager one in three ways, all here: its metadata sits at offsets fixed by
// max_batch rather than packed; it has a fixed number of rows (the padded size), the extra rows
// feeding token 0 at position 0 with slot -1 (no KV written) and a context of one key; and its
// attention is planned for a fixed context, the context tier (a power of two of blocks), the
// real lengths read from device memory. So there is one graph per (padded rows, tier, LoRA ops
// or none). Sampling is not in the graph: it reads the first rows' logits after the replay.
//
// Invariant: a graph kept was captured with the workspace generation and the cache views that
// forget_moved() was last given.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/forward_batch.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/step_inputs.hpp"

namespace courier::model {

class decode_graphs {
 public:
  // A graph's shape: padded rows, context tier (block-table entries a row's attention is
  // planned for), and whether it holds the LoRA ops (some row runs with an adapter).
  struct key {
    std::int32_t rows = 0;
    std::int32_t tier = 0;
    bool lora = false;
    bool operator<(const key& o) const {
      return std::tie(rows, tier, lora) < std::tie(o.rows, o.tier, o.lora);
    }
  };
  // Where the index pairs a step keeps and counts after its sampling are (device memory):
  // num_keeps sampled rows then their slots, num_counts sampled rows then their lists.
  struct pairs {
    const std::int32_t* keeps = nullptr;
    std::int32_t num_keeps = 0;
    const std::int32_t* counts = nullptr;
    std::int32_t num_counts = 0;
  };

  // Steps of up to max_batch rows (already capped by the workspace) within `limits`; `hybrid`
  // adds an array of state rows. Allocates the metadata buffer.
  decode_graphs(gpu::device& dev, const gpu::workspace_limits& limits, std::int32_t max_batch,
                bool hybrid);
  std::size_t meta_bytes() const { return meta_.size_bytes(); }
  std::size_t size() const { return graphs_.size(); }  // captured and kept now
  std::uint64_t replays() const { return replays_; }   // steps that replayed a graph
  std::int32_t max_batch() const { return max_batch_; }
  std::int32_t block_size() const { return block_size_; }
  std::int32_t max_kv_len() const { return max_kv_len_; }

  // The graph that runs `batch` (every row feeding one token and sampling it, within the
  // limits and the metadata buffer), or nothing when it runs op by op.
  std::optional<key> shape(const forward_batch& batch, std::int32_t cache_block_size) const;
  // Drops every graph when the workspace (its generation) or the cache's attention layers moved
  // since the graphs were captured.
  void forget_moved(const kv_cache& cache, std::int32_t kv_layers, std::uint64_t ws_generation);
  // Lays the step's arrays out at the graph's fixed offsets and uploads them: array k of the
  // fixed part at array(k) (ids, positions, slots, token -> table row, lengths, logits index,
  // LoRA slot, a hybrid's state row); then, outside the graph,
  // the next-token slots' reads and the table entries written, which `feed` and `write` enqueue
  // (llama_model's slot ops), and the pairs returned. Padding rows run on `pad_state_row`.
  using index_op =
      std::function<void(const std::int32_t*, const std::int32_t*, std::int32_t*, std::int32_t)>;
  pairs upload(const forward_batch& batch, const step_inputs& in, key shape,
               std::int32_t pad_state_row, const index_op& feed, const index_op& write);
  const std::int32_t* array(std::int32_t k) const {
    return static_cast<const std::int32_t*>(meta_.data()) + k * max_batch_;
  }
  // Replays k's graph, or runs `body` (which also settles per-shape choices, such as GEMM
  // algorithms, outside the capture) and captures it for the next step of that shape. A
  // failed capture is said on stderr once; such steps keep running op by op.
  void replay_or_capture(key k, const std::function<void()>& body);

 private:
  gpu::device& dev_;
  std::int32_t max_batch_ = 0;
  std::int32_t table_stride_ = 0;  // blocks of a max_kv_len context: the largest tier
  std::int32_t max_kv_len_ = 0;
  std::int32_t block_size_ = 0;
  std::int32_t arrays_ = 7;  // arrays of max_batch entries at the front of meta_
  gpu::device_buffer meta_;
  std::vector<std::int32_t> host_;  // the metadata as uploaded
  std::map<key, std::unique_ptr<gpu::device_graph>> graphs_;
  std::set<key> failed_;  // whose capture failed: such steps run op by op
  std::uint64_t ws_generation_ = 0;
  std::vector<gpu::kv_cache_view> cache_views_;
  std::uint64_t replays_ = 0;
};

}  // namespace courier::model
