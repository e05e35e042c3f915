#include "gpu/model/decode_graphs.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <initializer_list>

namespace courier::model {

namespace {

// The padded size of a step of s rows: 1, 2, 4, 8, then multiples of 16, at most max_batch.
std::int32_t padded_size(std::int32_t s, std::int32_t max_batch) {
  std::int32_t b = s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : (s + 15) / 16 * 16;
  return std::min(b, max_batch);
}

// The block-table width a graph is captured for: the next power of two of the widest row's
// table, at least 16 blocks, at most the max_kv_len context's. The context tier bounds the
// attention plan (split-K over the tier's keys, not max_model_len's).
std::int32_t context_tier(const forward_batch& batch, std::int32_t table_stride) {
  std::size_t widest = 1;
  for (const forward_row& row : batch.rows) widest = std::max(widest, row.table().size());
  std::int32_t tier = 16;
  while (tier < static_cast<std::int32_t>(widest)) tier *= 2;
  return std::min(tier, table_stride);
}

bool same_view(const gpu::kv_cache_view& a, const gpu::kv_cache_view& b) {
  return a.k == b.k && a.v == b.v && a.type == b.type && a.num_blocks == b.num_blocks &&
         a.block_size == b.block_size && a.num_kv_heads == b.num_kv_heads &&
         a.head_dim == b.head_dim;
}

// A row a graph can run: one token fed and sampled, nothing read back but the sample, its
// lists already on the device, within the limits.
bool graph_row(const forward_row& row, std::int32_t max_kv_len, std::int32_t table_stride) {
  return row.tokens.size() == 1 && row.sample && row.num_sample == 1 && row.score_targets.empty() &&
         row.logits != logits_mode::all && !row.return_logits && !row.return_hidden &&
         !row.penalty_init &&
         !row.bias_init && row.start_pos + 1 <= max_kv_len &&
         static_cast<std::int64_t>(row.table().size()) <= table_stride;
}

}  // namespace

decode_graphs::decode_graphs(gpu::device& dev, const gpu::workspace_limits& limits,
                             std::int32_t max_batch, bool hybrid)
    : dev_(dev),
      max_batch_(max_batch),
      table_stride_(static_cast<std::int32_t>((limits.max_kv_len + limits.block_size - 1) /
                                              limits.block_size)),
      max_kv_len_(static_cast<std::int32_t>(limits.max_kv_len)),
      block_size_(limits.block_size),
      arrays_(hybrid ? 8 : 7) {
  // The arrays of max_batch entries, the next-token slots' reads and writes and the penalty
  // lists' counts (two index arrays each), and the table entries written (three arrays: room
  // for a third of a table row per row; a step writing more runs op by op).
  const std::size_t entries =
      static_cast<std::size_t>(max_batch_) *
      (static_cast<std::size_t>(arrays_) + 6 + static_cast<std::size_t>(table_stride_));
  meta_ = dev_.allocate(entries * sizeof(std::int32_t));
  host_.reserve(entries);
}

std::optional<decode_graphs::key> decode_graphs::shape(const forward_batch& batch,
                                                       std::int32_t cache_block_size) const {
  if (batch.return_logits || cache_block_size != block_size_ ||
      static_cast<std::int64_t>(batch.rows.size()) > max_batch_) {
    return std::nullopt;
  }
  bool lora = false;
  for (const forward_row& row : batch.rows) {
    if (!graph_row(row, max_kv_len_, table_stride_)) return std::nullopt;
    lora = lora || row.lora_slot >= 0;
  }
  const key shape{padded_size(static_cast<std::int32_t>(batch.rows.size()), max_batch_),
                  context_tier(batch, table_stride_), lora};
  if (failed_.count(shape)) return std::nullopt;
  // The metadata buffer holds, past the fixed part, the table entries written to the device's
  // and the slots' index pairs; a step writing more (tables written whole) runs op by op.
  std::int64_t writes = 0, pairs = 0;
  for (const forward_row& row : batch.rows) {
    writes += static_cast<std::int64_t>(row.table().size()) - row.table_keep;
    pairs += (row.token_slot >= 0 ? 2 : 0) + (row.next_slot >= 0 ? 2 : 0) +
             (row.penalty_slot >= 0 ? 2 : 0);
  }
  const std::int64_t fixed = std::int64_t{arrays_} * max_batch_;
  const auto capacity = static_cast<std::int64_t>(meta_.size_bytes() / sizeof(std::int32_t));
  if (fixed + pairs + 3 * writes > capacity) return std::nullopt;
  return shape;
}

// Graphs hold the addresses of the workspace and the cache they were captured with (the
// attention layers': a hybrid's Mamba-2 and MLP layers have no KV): when either moved, they go.
void decode_graphs::forget_moved(const kv_cache& cache, std::int32_t kv_layers,
                                 std::uint64_t ws_generation) {
  bool same_cache = static_cast<std::int32_t>(cache_views_.size()) == kv_layers;
  for (std::int32_t li = 0; same_cache && li < kv_layers; ++li) {
    same_cache = same_view(cache.layer(li), cache_views_[static_cast<std::size_t>(li)]);
  }
  if (ws_generation_ == ws_generation && same_cache) return;
  graphs_.clear();
  ws_generation_ = ws_generation;
  cache_views_.clear();
  for (std::int32_t li = 0; li < kv_layers; ++li) cache_views_.push_back(cache.layer(li));
}

// ids, positions, slots, token -> table row, lengths, logits index, LoRA slot at r, M + r,
// ..., 6M + r, and a hybrid's state row at 7M + r (A arrays in all); then (outside the graph)
// the next-token slots' reads (slots, then token indices) and writes (sampled rows, then
// slots), the penalty lists' counts (sampled rows, then slots), and the table entries written
// to the device's (values, 0..n-1, places). Padding rows: token 0 at
// position 0, slot -1, no adapter, table row 0 or 1 (any row holds valid block ids; not the
// last real row's, so that padding never joins its tokens' run); a hybrid's padding rows all
// run on its padding state row, from position 0 (a fresh state: nothing real is read).
decode_graphs::pairs decode_graphs::upload(const forward_batch& batch, const step_inputs& in,
                                           key shape, std::int32_t pad_state_row,
                                           const index_op& feed, const index_op& write) {
  const auto S = static_cast<std::int32_t>(batch.rows.size());
  const std::int32_t B = shape.rows, M = max_batch_, A = arrays_;
  const bool hybrid = arrays_ > 7;
  const auto feeds = static_cast<std::int32_t>(in.feed_src.size()),
             keeps = static_cast<std::int32_t>(in.keep_src.size()),
             counts = static_cast<std::int32_t>(in.count_src.size()),
             writes = static_cast<std::int32_t>(in.table_values.size());
  const std::int32_t at_feeds = A * M,
                     at_keeps = at_feeds + 2 * feeds, at_counts = at_keeps + 2 * keeps,
                     at_writes = at_counts + 2 * counts;
  std::vector<std::int32_t>& h = host_;
  h.assign(static_cast<std::size_t>(at_writes + 3 * writes), 0);
  const std::int32_t pad_row = S > 0 && batch.rows[static_cast<std::size_t>(S - 1)].table_slot == 0;
  for (std::int32_t r = 0; r < B; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const bool real = r < S;
    h[r] = real ? in.ids[i] : 0;
    h[M + r] = real ? in.positions[i] : 0;
    h[2 * M + r] = real ? in.slots[i] : -1;
    h[3 * M + r] = real ? in.token_seq[i] : pad_row;
    h[4 * M + r] = real ? in.kv_len[i] : 1;
    h[5 * M + r] = r;
    h[6 * M + r] = real ? batch.rows[i].lora_slot : -1;
    if (hybrid) h[7 * M + r] = real ? in.state_rows[i] : pad_state_row;
  }
  std::int32_t at = at_feeds;
  for (const std::vector<std::int32_t>* v :
       {&in.feed_src, &in.feed_dst, &in.keep_src, &in.keep_dst, &in.count_src, &in.count_dst,
        &in.table_values, &in.table_iota, &in.table_places}) {
    std::copy(v->begin(), v->end(), h.begin() + at);
    at += static_cast<std::int32_t>(v->size());
  }
  dev_.upload(meta_.data(), h.data(), h.size() * sizeof(std::int32_t));
  auto* meta = static_cast<std::int32_t*>(meta_.data());
  feed(meta + at_feeds, meta + at_feeds + feeds, meta, feeds);
  write(meta + at_writes, meta + at_writes + writes, meta + at_writes + 2 * writes, writes);
  return {meta + at_keeps, keeps, meta + at_counts, counts};
}

void decode_graphs::replay_or_capture(key k, const std::function<void()>& body) {
  auto it = graphs_.find(k);
  if (it != graphs_.end()) {
    it->second->replay();
    ++replays_;
    return;
  }
  body();
  try {
    std::unique_ptr<gpu::device_graph> graph = dev_.capture(body);
    if (graph) graphs_.emplace(k, std::move(graph));
  } catch (const std::exception& e) {
    // This step's result stands (it ran above); steps of this shape keep running op by op.
    std::fprintf(stderr,
                 "courier: capturing the decode graph of %d rows and %d-block tables failed "
                 "(%s); such steps run op by op\n",
                 k.rows, k.tier, e.what());
    failed_.insert(k);
  }
}

}  // namespace courier::model
