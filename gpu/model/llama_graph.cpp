// llama_model's decode steps as graphs (see enable_graphs in llama.hpp): which steps replay a
// graph, and how one runs; the graphs themselves, their shapes and their fixed metadata are
// decode_graphs'.
#include <algorithm>
#include <stdexcept>

#include "gpu/model/decode_graphs.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"
#include "gpu/model/model_body.hpp"

namespace courier::model {

std::size_t llama_model::enable_graphs(std::int32_t max_batch) {
  graphs_.reset();
  if (max_batch <= 0) return 0;
  if (limits_.max_tokens < 1) throw std::logic_error("enable_graphs: call reserve() first");
  const workspace& w = *ws_;
  const std::int64_t cap =
      std::min({static_cast<std::int64_t>(max_batch), w.tokens, w.seqs, w.logit_rows});
  graphs_ = std::make_unique<decode_graphs>(dev_, limits_, static_cast<std::int32_t>(cap),
                                            cfg_.hybrid());
  return graphs_->meta_bytes();
}

std::size_t llama_model::num_graphs() const { return graphs_ ? graphs_->size() : 0; }

std::uint64_t llama_model::graph_steps() const { return graphs_ ? graphs_->replays() : 0; }

std::optional<decode_graphs::key> llama_model::graph_shape(const forward_batch& batch,
                                                           const kv_cache& cache) const {
  // A hybrid's padding rows need a state row of their own (reserve_states after enable_graphs).
  if (cfg_.hybrid() && states_.pad_row() < 0) return std::nullopt;
  return graphs_->shape(batch, cache.block_size());
}

launched_forward llama_model::launch_graph(const forward_batch& batch, kv_cache& cache,
                                           decode_graphs::key shape) {
  decode_graphs& g = *graphs_;
  const auto S = static_cast<std::int32_t>(batch.rows.size());
  g.forget_moved(cache, cfg_.kv_layers(), ws_->generation);
  // Each row feeds one token and samples one position (graph_shape), so token, row and sample
  // entry indices agree.
  const step_inputs in = build_step_inputs(
      batch, {g.block_size(), table_stride_, state_slots(), cfg_.hybrid()});
  const decode_graphs::pairs pairs = g.upload(
      batch, in, shape, states_.pad_row(),
      [this](const std::int32_t* src, const std::int32_t* dst, std::int32_t* ids,
             std::int32_t n) { feed_tokens(src, dst, ids, n); },
      [this](const std::int32_t* values, const std::int32_t* iota, std::int32_t* places,
             std::int32_t n) { write_tables(values, iota, places, n); });
  const step_meta m = graph_meta(shape);
  // A hybrid's state copies before and after the rows, as an eager step runs them (graph steps
  // verify no drafts). The rows are reserved: the states' buffers the graphs hold never move.
  states_.before(batch);
  g.replay_or_capture(shape, [&] { body_->run(*this, m, cache); });
  states_.after(batch);

  launched_forward launched;
  launched.out_.rows.resize(batch.rows.size());
  // row r samples logits row r
  sample_rows(batch, ws_->logits.view(gpu::dtype::f32, S, cfg_.vocab_size), in.entries, launched);
  keep_next_tokens(pairs.keeps, pairs.keeps + pairs.num_keeps, pairs.num_keeps);
  count_penalties(pairs.counts, pairs.counts + pairs.num_counts, pairs.num_counts);
  return launched;
}

// A graph step's sizes and metadata: the padded rows, every array at its fixed place.
llama_model::step_meta llama_model::graph_meta(decode_graphs::key shape) const {
  const decode_graphs& g = *graphs_;
  const std::int32_t B = shape.rows;
  step_meta m;
  m.T = B;
  m.R = B;
  m.ids = g.array(0);
  m.logit_index = g.array(5);
  m.ab.positions = g.array(1);
  m.ab.slot_mapping = g.array(2);
  m.ab.token_seq = g.array(3);
  m.ab.seq_kv_len = g.array(4);
  m.ab.block_tables = static_cast<const std::int32_t*>(tables_.data());
  m.lora_slots = shape.lora ? g.array(6) : nullptr;
  m.every_lora = true;
  m.ab.num_tokens = B;
  m.ab.num_seqs = B;
  m.ab.max_blocks_per_seq = table_stride_;
  m.ab.block_size = g.block_size();
  // The workspace's bound holds.
  m.ab.max_kv_len = std::min(shape.tier * g.block_size(), g.max_kv_len());
  if (cfg_.hybrid()) m.mb = {g.array(7), m.ab.positions, B, nullptr};
  return m;
}

}  // namespace courier::model
