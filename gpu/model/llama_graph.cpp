// llama_model's decode steps as graphs (see enable_graphs in llama.hpp). A graph fixes every
// pointer, size and plan it was captured with, so a graph step differs from an eager one in
// three ways, all here: its metadata sits at offsets fixed by max_batch rather than packed; it
// has a fixed number of rows (the padded size), the extra rows feeding token 0 at position 0
// with slot -1 (no KV written) and a context of one key; and its block tables have a fixed
// width, the context tier (a power of two of blocks), for which attention is planned, the real
// lengths read from device memory. So there is one graph per (padded rows, tier). Sampling is
// not in the graph: it reads the first S logits rows after the replay.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

namespace {

// The padded size of a step of s rows: 1, 2, 4, 8, then multiples of 16, at most max_batch.
std::int32_t padded_size(std::int32_t s, std::int32_t max_batch) {
  std::int32_t b = s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : (s + 15) / 16 * 16;
  return std::min(b, max_batch);
}

// The block-table width a graph is captured for: the next power of two of the widest row's
// table, at least 16 blocks, at most the max_kv_len context's. The context tier bounds both the
// metadata uploaded per step and the attention plan (split-K over the tier's keys, not
// max_model_len's).
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

}  // namespace

std::size_t llama_model::enable_graphs(std::int32_t max_batch) {
  graphs_.reset();
  if (max_batch <= 0) return 0;
  if (limits_.max_tokens < 1) throw std::logic_error("enable_graphs: call reserve() first");
  const workspace& w = *ws_;
  const std::int64_t cap =
      std::min({static_cast<std::int64_t>(max_batch), w.tokens, w.seqs, w.logit_rows});
  auto g = std::make_unique<graph_state>();
  g->max_batch = static_cast<std::int32_t>(cap);
  g->block_size = limits_.block_size;
  g->max_kv_len = static_cast<std::int32_t>(limits_.max_kv_len);
  g->table_stride =
      static_cast<std::int32_t>((limits_.max_kv_len + limits_.block_size - 1) / limits_.block_size);
  g->arrays = cfg_.hybrid() ? 8 : 7;
  // The arrays of max_batch entries, the tables, and the next-token slots' reads and writes and
  // the penalty lists' counts (two index arrays each).
  const std::size_t entries = static_cast<std::size_t>(g->max_batch) *
                              (static_cast<std::size_t>(g->arrays) + 6 +
                               static_cast<std::size_t>(g->table_stride));
  g->meta = dev_.allocate(entries * sizeof(std::int32_t));
  g->host.reserve(entries);
  g->ws_generation = w.generation;
  graphs_ = std::move(g);
  return entries * sizeof(std::int32_t);
}

std::size_t llama_model::num_graphs() const {
  return graphs_ ? graphs_->graphs.size() : 0;
}

std::uint64_t llama_model::graph_steps() const {
  return graphs_ ? graphs_->replays : 0;
}

std::optional<llama_model::graph_key> llama_model::graph_shape(const forward_batch& batch,
                                                               const kv_cache& cache) const {
  const graph_state& g = *graphs_;
  // A hybrid's padding rows need a state row of their own (reserve_states after enable_graphs).
  if (batch.return_logits || (cfg_.hybrid() && states_.pad_row() < 0) ||
      cache.block_size() != g.block_size ||
      static_cast<std::int64_t>(batch.rows.size()) > g.max_batch) {
    return std::nullopt;
  }
  for (const forward_row& row : batch.rows) {
    if (row.tokens.size() != 1 || !row.sample || row.num_sample != 1 ||
        !row.score_targets.empty() ||
        row.logits == logits_mode::all || row.return_logits || row.penalty_init ||
        row.bias_init ||
        row.start_pos + 1 > g.max_kv_len ||
        static_cast<std::int64_t>(row.table().size()) > g.table_stride) {
      return std::nullopt;
    }
  }
  bool lora = false;
  for (const forward_row& row : batch.rows) lora = lora || row.lora_slot >= 0;
  const graph_state::key shape{
      padded_size(static_cast<std::int32_t>(batch.rows.size()), g.max_batch),
      context_tier(batch, g.table_stride), persistent_tables(batch), lora};
  if (g.failed.count(shape)) return std::nullopt;
  // The metadata buffer holds, past the fixed part, the uploaded tables or the entries written
  // to the device's, and the slots' index pairs; a step writing more (a table resent whole)
  // runs op by op.
  std::int64_t writes = 0, pairs = 0;
  for (const forward_row& row : batch.rows) {
    if (row.table_slot >= 0) {
      writes += static_cast<std::int64_t>(row.table().size()) - row.table_keep;
    }
    pairs += (row.token_slot >= 0 ? 2 : 0) + (row.next_slot >= 0 ? 2 : 0) +
             (row.penalty_slot >= 0 ? 2 : 0);
  }
  const std::int64_t fixed = std::int64_t{g.arrays} * g.max_batch +
                             (shape.persistent ? 0 : std::int64_t{shape.rows} * shape.tier);
  const auto capacity = static_cast<std::int64_t>(g.meta.size_bytes() / sizeof(std::int32_t));
  if (fixed + pairs + 3 * writes > capacity) return std::nullopt;
  return shape;
}

launched_forward llama_model::launch_graph(const forward_batch& batch, kv_cache& cache,
                                           graph_key shape) {
  graph_state& g = *graphs_;
  const auto S = static_cast<std::int32_t>(batch.rows.size());
  const std::int32_t B = shape.rows, tier = shape.tier, M = g.max_batch;
  forget_moved_graphs(cache);
  // Each row feeds one token and samples one position (graph_shape), so token, row and sample
  // entry indices agree.
  const step_inputs in =
      build_step_inputs(batch, {g.block_size, table_stride_, state_slots(), cfg_.hybrid(), false});
  const graph_pairs pairs = upload_graph_step(batch, in, shape);
  const std::int32_t* meta = static_cast<const std::int32_t*>(g.meta.data());

  step_meta m;
  m.T = B;
  m.R = B;
  m.ids = meta;
  m.logit_index = meta + 5 * M;
  m.ab.positions = meta + M;
  m.ab.slot_mapping = meta + 2 * M;
  m.ab.token_seq = meta + 3 * M;
  m.ab.seq_kv_len = meta + 4 * M;
  m.ab.block_tables = shape.persistent ? static_cast<const std::int32_t*>(tables_.data())
                                       : meta + g.arrays * M;
  m.lora_slots = shape.lora ? meta + 6 * M : nullptr;
  m.every_lora = true;
  m.ab.num_tokens = B;
  m.ab.num_seqs = B;
  m.ab.max_blocks_per_seq = shape.persistent ? table_stride_ : tier;
  m.ab.block_size = g.block_size;
  m.ab.max_kv_len = std::min(tier * g.block_size, g.max_kv_len);  // the workspace's bound holds
  if (cfg_.hybrid()) {
    // The state rows, and the copies before and after the rows as an eager step runs them
    // (graph steps verify no drafts: no save rows). The rows are reserved: the states' buffers
    // the graphs hold never move.
    m.mb = {meta + 7 * M, m.ab.positions, B, nullptr};
    states_.before(batch);
  }
  replay_or_capture(shape, m, cache);
  if (cfg_.hybrid()) states_.after(batch);

  launched_forward launched;
  launched.out_.rows.resize(batch.rows.size());
  // row r samples logits row r
  sample_rows(batch, ws_->logits.view(gpu::dtype::f32, S, cfg_.vocab_size), in.entries, launched);
  keep_next_tokens(pairs.keeps, pairs.keeps + pairs.num_keeps, pairs.num_keeps);
  count_penalties(pairs.counts, pairs.counts + pairs.num_counts, pairs.num_counts);
  return launched;
}

// Graphs hold the addresses of the workspace and the cache they were captured with (the
// attention layers': a hybrid's Mamba-2 and MLP layers have no KV): when either moved, they go.
void llama_model::forget_moved_graphs(kv_cache& cache) {
  graph_state& g = *graphs_;
  const std::int32_t kv_layers = cfg_.kv_layers();
  bool same_cache = static_cast<std::int32_t>(g.cache_views.size()) == kv_layers;
  for (std::int32_t li = 0; same_cache && li < kv_layers; ++li) {
    same_cache = same_view(cache.layer(li), g.cache_views[static_cast<std::size_t>(li)]);
  }
  if (g.ws_generation == ws_->generation && same_cache) return;
  g.graphs.clear();
  g.ws_generation = ws_->generation;
  g.cache_views.clear();
  for (std::int32_t li = 0; li < kv_layers; ++li) g.cache_views.push_back(cache.layer(li));
}

// ids, positions, slots, token -> table row, lengths, logits index, LoRA slot at r, M + r,
// ..., 6M + r, and a hybrid's state row at 7M + r (A arrays in all); the tables uploaded
// whole from AM, `tier` entries a row (not persistent); then
// (outside the graph) the next-token slots' reads (slots, then token indices) and writes
// (sampled rows, then slots), the penalty lists' counts (sampled rows, then slots), and the
// table entries written to the device's (values, 0..n-1, places). Padding rows: token 0 at
// position 0, slot -1, no adapter, table row 0 or 1 (any row holds valid block ids; not the
// last real row's, so that padding never joins its tokens' run); a hybrid's padding rows all
// run on its padding state row, from position 0 (a fresh state: nothing real is read).
llama_model::graph_pairs llama_model::upload_graph_step(const forward_batch& batch,
                                                        const step_inputs& in, graph_key shape) {
  graph_state& g = *graphs_;
  const auto S = static_cast<std::int32_t>(batch.rows.size());
  const std::int32_t B = shape.rows, tier = shape.tier, M = g.max_batch, A = g.arrays;
  const bool persistent = shape.persistent, hybrid = cfg_.hybrid();
  const auto feeds = static_cast<std::int32_t>(in.feed_src.size()),
             keeps = static_cast<std::int32_t>(in.keep_src.size()),
             counts = static_cast<std::int32_t>(in.count_src.size()),
             writes = static_cast<std::int32_t>(in.table_values.size());
  const std::int32_t at_feeds = A * M + (persistent ? 0 : B * tier),
                     at_keeps = at_feeds + 2 * feeds, at_counts = at_keeps + 2 * keeps,
                     at_writes = at_counts + 2 * counts;
  std::vector<std::int32_t>& h = g.host;
  h.assign(static_cast<std::size_t>(at_writes + 3 * writes), 0);
  const std::int32_t pad_row = S > 0 && batch.rows[static_cast<std::size_t>(S - 1)].table_slot == 0;
  for (std::int32_t r = 0; r < B; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const bool real = r < S;
    h[r] = real ? in.ids[i] : 0;
    h[M + r] = real ? in.positions[i] : 0;
    h[2 * M + r] = real ? in.slots[i] : -1;
    h[3 * M + r] = real ? in.token_seq[i] : (persistent ? pad_row : r);
    h[4 * M + r] = real ? in.kv_len[i] : 1;
    h[5 * M + r] = r;
    h[6 * M + r] = real ? batch.rows[i].lora_slot : -1;
    if (hybrid) h[7 * M + r] = real ? in.state_rows[i] : states_.pad_row();
    if (real && !persistent) {
      const std::vector<std::int32_t>& t = batch.rows[i].table();
      std::copy(t.begin(), t.end(), h.begin() + A * M + static_cast<std::ptrdiff_t>(r) * tier);
    }
  }
  std::int32_t at = at_feeds;
  for (const std::vector<std::int32_t>* v :
       {&in.feed_src, &in.feed_dst, &in.keep_src, &in.keep_dst, &in.count_src, &in.count_dst,
        &in.table_values, &in.table_iota, &in.table_places}) {
    std::copy(v->begin(), v->end(), h.begin() + at);
    at += static_cast<std::int32_t>(v->size());
  }
  dev_.upload(g.meta.data(), h.data(), h.size() * sizeof(std::int32_t));
  auto* meta = static_cast<std::int32_t*>(g.meta.data());
  feed_tokens(meta + at_feeds, meta + at_feeds + feeds, meta, feeds);
  write_tables(meta + at_writes, meta + at_writes + writes, meta + at_writes + 2 * writes, writes);
  return {meta + at_keeps, keeps, meta + at_counts, counts};
}

void llama_model::replay_or_capture(graph_key key, const step_meta& m, kv_cache& cache) {
  graph_state& g = *graphs_;
  auto it = g.graphs.find(key);
  if (it != g.graphs.end()) {
    it->second->replay();
    ++g.replays;
    return;
  }
  // This step runs directly (which also settles per-shape choices, such as GEMM algorithms,
  // outside the capture); the next step of this size replays what is captured now.
  run_body(m, cache);
  try {
    std::unique_ptr<gpu::device_graph> graph = dev_.capture([&] { run_body(m, cache); });
    if (graph) g.graphs.emplace(key, std::move(graph));
  } catch (const std::exception& e) {
    // This step's result stands (it ran above); steps of this shape keep running op by op.
    std::fprintf(stderr,
                 "courier: capturing the decode graph of %d rows and %d-block tables failed "
                 "(%s); such steps run op by op\n",
                 key.rows, key.tier, e.what());
    g.failed.insert(key);
  }
}

}  // namespace courier::model
