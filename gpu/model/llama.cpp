#include "gpu/model/llama.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "gpu/model/llama_layer.hpp"
#include "gpu/model/model_body.hpp"

namespace courier::model {

namespace {

// Each metadata array starts at a multiple of 4 entries (16 bytes).
std::int64_t meta_pad(std::int64_t n) { return (n + 3) / 4 * 4; }

// Appends v to the packed metadata; returns where it starts.
std::int64_t pack(std::vector<std::int32_t>& packed, const std::vector<std::int32_t>& v) {
  const auto at = static_cast<std::int64_t>(packed.size());
  packed.insert(packed.end(), v.begin(), v.end());
  packed.resize(static_cast<std::size_t>(at + meta_pad(static_cast<std::int64_t>(v.size()))), 0);
  return at;
}

static_assert(sizeof(gpu::draft_states) == 5 * sizeof(std::int32_t) &&
                  alignof(gpu::draft_states) == alignof(std::int32_t),
              "draft checks are packed as 5 int32 each");

}  // namespace

namespace {

tp_layout layout_on(const gpu::device& dev, const model_config& cfg) {
  try {
    return tp_layout_for(cfg, dev.group_rank(), dev.group_size());
  } catch (const std::invalid_argument& e) {
    throw model_error(fmt::format("{} over {} ranks: {}", cfg.architecture_name,
                                  dev.group_size(), e.what()));
  }
}

model_config shard_of(model_config cfg, const tp_layout& tp) {
  if (tp.size == 1) return cfg;
  cfg.num_heads = static_cast<std::int32_t>(tp.q_heads.count);
  cfg.num_kv_heads = static_cast<std::int32_t>(tp.kv_heads.count);
  cfg.intermediate_size = tp.ffn.count;
  if (cfg.hybrid()) {
    cfg.mamba.num_heads = static_cast<std::int32_t>(tp.mamba_heads.count);
    cfg.mamba.n_groups = static_cast<std::int32_t>(tp.mamba_groups.count);
  }
  return cfg;
}

}  // namespace

llama_model::llama_model(gpu::device& dev, model_config cfg)
    : dev_(dev),
      cfg_(std::move(cfg)),
      tp_(layout_on(dev, cfg_)),
      shard_(shard_of(cfg_, tp_)),
      body_(make_body(cfg_)),
      states_(dev, shard_.mamba, cfg_.mamba_layers()),
      ws_(std::make_unique<workspace>()) {}

llama_model::~llama_model() = default;

void llama_model::validate(const forward_batch& batch, const kv_cache& cache) const {
  if (batch.rows.empty()) throw std::invalid_argument("forward: empty batch");
  if (cfg_.hybrid()) {
    validate_snapshots(batch);
  } else if (!batch.state_copies.empty()) {
    throw std::invalid_argument("forward batch: state copies for a model without state");
  }
  std::int32_t drafts = 0;  // a hybrid's: each takes a draft state row
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    validate_tokens(batch.rows[r], r, cache);
    validate_sampling(batch.rows[r], r);
    validate_slots(batch, r);
    validate_states(batch.rows[r], r, drafts);
    validate_lists(batch, r);
  }
}

// Its tokens, its table (what it reads, or what it writes to the device's), its adapter.
void llama_model::validate_tokens(const forward_row& row, std::size_t r,
                                  const kv_cache& cache) const {
  if (row.tokens.empty()) throw std::invalid_argument(fmt::format("forward: row {} is empty", r));
  if (row.start_pos < 0) throw std::invalid_argument("forward: negative start position");
  const std::int64_t end = row.start_pos + static_cast<std::int64_t>(row.tokens.size());
  const std::int64_t need = (end + cache.block_size() - 1) / cache.block_size();
  if (static_cast<std::int64_t>(row.table().size()) < need) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} needs {} blocks for {} tokens, has {}", r, need, end,
        row.table().size()));
  }
  // Its table is kept in table row table_slot of the device's: checked as it is written, every
  // entry this launch writes (its first table_keep were checked by the launches that wrote
  // them), so the host's work per row does not grow with the context.
  if (row.table_slot < 0 || row.table_slot >= num_token_slots_ || row.table_keep < 0 ||
      static_cast<std::size_t>(row.table_keep) > row.table().size() ||
      static_cast<std::int64_t>(row.table().size()) > table_stride_) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} keeps its table of {} blocks ({} on the device already) in table row "
        "{} (the model has {} rows of {} blocks: reserve or reserve_slots)",
        r, row.table().size(), row.table_keep, row.table_slot, num_token_slots_,
        table_stride_));
  }
  for (std::size_t b = static_cast<std::size_t>(row.table_keep); b < row.table().size(); ++b) {
    if (row.table()[b] < 0 || row.table()[b] >= cache.num_blocks()) {
      throw std::invalid_argument(fmt::format("forward: row {} block {} out of range", r, b));
    }
  }
  if (row.lora_slot < -1 || row.lora_slot >= lora_slots_) {
    throw std::invalid_argument(fmt::format("forward: row {} runs LoRA slot {} of {}", r,
                                            row.lora_slot, lora_slots_));
  }
  for (token_id t : row.tokens) {
    if (t >= static_cast<token_id>(cfg_.vocab_size)) {
      throw std::invalid_argument(fmt::format("forward: token id {} is outside the vocabulary "
                                              "of {}", t, cfg_.vocab_size));
    }
  }
}

// What it samples and scores.
void llama_model::validate_sampling(const forward_row& row, std::size_t r) const {
  if (row.sample && (row.num_sample < 1 || row.num_sample > static_cast<std::int32_t>(row.tokens.size()) ||
                     (row.num_sample > 1 && row.sampling.penalty_count > 0))) {
    throw std::invalid_argument(fmt::format("forward: row {} samples {} positions", r,
                                            row.num_sample));
  }
  if (!row.score_targets.empty()) {
    if (row.score_targets.size() != row.tokens.size() || row.logits != logits_mode::all ||
        row.score_top_n < 0 || row.score_top_n > gpu::max_logprobs) {
      throw std::invalid_argument(fmt::format(
          "forward: row {} scores {} positions of {} (top {}); it needs one target per token, "
          "logits of all positions and a top-N of 0..{}",
          r, row.score_targets.size(), row.tokens.size(), row.score_top_n, gpu::max_logprobs));
    }
    for (std::int32_t t : row.score_targets) {
      if (t >= cfg_.vocab_size || t < -1) {
        throw std::invalid_argument(fmt::format(
            "forward: row {} scores token {}, outside the vocabulary of {}", r, t,
            cfg_.vocab_size));
      }
    }
  }
  if (row.return_hidden && row.logits == logits_mode::none) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} asks for its hidden state without logits (the final norm runs on the "
        "positions logits are computed for)",
        r));
  }
  if (row.sample && row.sampling.score_token >= 0) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} samples with a score_token (scoring is score_targets')", r));
  }
}

// The slots it reads and writes on the device: next token, table, penalty and bias lists.
void llama_model::validate_slots(const forward_batch& batch, std::size_t r) const {
  const forward_row& row = batch.rows[r];
  if (row.token_slot >= 0 && (row.tokens.size() != 1 || row.token_slot >= num_token_slots_)) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} of {} tokens reads next-token slot {} (the model has {}; a row that "
        "reads one holds one token)",
        r, row.tokens.size(), row.token_slot, num_token_slots_));
  }
  if (row.next_slot >= 0 &&
      (!row.sample || row.num_sample != 1 || row.next_slot >= num_token_slots_)) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} writes next-token slot {} (the model has {}; only a row that samples "
        "one position writes one)",
        r, row.next_slot, num_token_slots_));
  }
  validate_penalty_slot(batch, r);
  validate_bias_slot(batch, r);
}

// A hybrid's state rows: its own, a restore's, a snapshot's, and the draft rows it takes.
void llama_model::validate_states(const forward_row& row, std::size_t r,
                                  std::int32_t& drafts) const {
  if (cfg_.hybrid() ? row.state_slot < 0 : row.state_slot != -1) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} has state slot {} (a hybrid model's rows each need one, others none)",
        r, row.state_slot));
  }
  if ((row.state_restore >= 0 || row.state_snapshot >= 0) &&
      (!cfg_.hybrid() || (row.state_restore >= 0 && row.start_pos == 0) ||
       row.state_restore < -1 || row.state_snapshot < -1)) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} restores state row {} at position {} or snapshots into {} (hybrid "
        "models only; a restored row continues past position 0)",
        r, row.state_restore, row.start_pos, row.state_snapshot));
  }
  if (states_.reserved() && std::max({row.state_slot, row.state_restore, row.state_snapshot}) >=
                              state_slots()) {
    // Rows past those reserved would grow the states, losing every sequence's and snapshot.
    throw std::invalid_argument(fmt::format(
        "forward: row {} names state row {}, {} or {}, past the {} reserved", r, row.state_slot,
        row.state_restore, row.state_snapshot, state_slots()));
  }
  if (cfg_.hybrid() && row.sample && row.num_sample > 1) {
    drafts += row.num_sample - 1;
    if (!row.score_targets.empty() || drafts > states_.draft_rows()) {
      throw std::invalid_argument(fmt::format(
          "forward: row {} verifies {} drafts; a hybrid model keeps the state after each draft "
          "in one of {} draft rows a step (reserve_states), and scores no prompt beside them",
          r, row.num_sample - 1, states_.draft_rows()));
    }
  }
}

// The slices of the batch's lists it reads: masks, end tokens and bias tokens.
void llama_model::validate_lists(const forward_batch& batch, std::size_t r) const {
  const forward_row& row = batch.rows[r];
  const gpu::sampling_row& e = row.sampling;
  if (row.sample && e.end_count != 0 &&
      (e.end_count < 0 || e.end_count > gpu::max_end_tokens || e.end_begin < 0 ||
       static_cast<std::size_t>(e.end_begin) + static_cast<std::size_t>(e.end_count) >
           batch.end_tokens.size())) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} has {} end tokens from {} (at most {}; the batch has {})", r,
        e.end_count, e.end_begin, gpu::max_end_tokens, batch.end_tokens.size()));
  }
  if (row.sample && row.sampling.mask_begin >= 0 &&
      static_cast<std::size_t>(row.sampling.mask_begin +
                               row.num_sample * gpu::mask_words_per_row(cfg_.vocab_size)) >
          batch.mask_words.size()) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} has masks from word {} for {} positions; the batch has {} words", r,
        row.sampling.mask_begin, row.num_sample, batch.mask_words.size()));
  }
  // A bias kept on the device was checked by the launch that wrote it (bias_init).
  const bool bias_kept = row.bias_slot >= 0 && !row.bias_init;
  if (row.sample && row.sampling.bias_count != 0) {
    const gpu::sampling_row& g = row.sampling;
    if (g.bias_count < 0 || g.bias_count > gpu::max_bias_tokens ||
        (!bias_kept && (g.bias_begin < 0 || static_cast<std::size_t>(g.bias_begin) +
                                                    static_cast<std::size_t>(g.bias_count) >
                                                batch.bias_tokens.size()))) {
      throw std::invalid_argument(fmt::format(
          "forward: row {} has {} bias tokens from {} (at most {}; the batch has {})", r,
          g.bias_count, g.bias_begin, gpu::max_bias_tokens, batch.bias_tokens.size()));
    }
    for (std::int32_t j = 0; !bias_kept && j < g.bias_count; ++j) {
      const gpu::bias_token& b = batch.bias_tokens[static_cast<std::size_t>(g.bias_begin + j)];
      if (b.token >= static_cast<token_id>(cfg_.vocab_size)) {
        throw std::invalid_argument(fmt::format(
            "forward: bias token id {} is outside the vocabulary of {}", b.token,
            cfg_.vocab_size));
      }
    }
  }
}

void llama_model::validate_snapshots(const forward_batch& batch) const {
  // A snapshot's target is no row's live state or restore source, and no other row's target:
  // restores run before the step and snapshots after it, so any overlap would be ambiguous.
  std::vector<std::int32_t> used, targets;
  for (const forward_row& row : batch.rows) {
    used.push_back(row.state_slot);
    if (row.state_restore >= 0) used.push_back(row.state_restore);
    if (row.state_snapshot >= 0) targets.push_back(row.state_snapshot);
  }
  std::sort(targets.begin(), targets.end());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if ((i > 0 && targets[i] == targets[i - 1]) ||
        std::find(used.begin(), used.end(), targets[i]) != used.end()) {
      throw std::invalid_argument(fmt::format(
          "forward: state row {} is a snapshot target and also read or written by the step",
          targets[i]));
    }
  }
}

void llama_model::validate_penalty_slot(const forward_batch& batch, std::size_t r) const {
  const forward_row& row = batch.rows[r];
  const gpu::sampling_row& g = row.sampling;
  if (g.penalty_list != -1) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} names sampler penalty list {} (a row's list is its penalty_slot)", r,
        g.penalty_list));
  }
  if (row.penalty_slot < 0 && !row.penalty_init && g.penalty_count == 0) return;
  if (row.penalty_slot < 0 || row.penalty_slot >= num_token_slots_ || !row.sample ||
      row.num_sample != 1 ||
      (row.penalty_init ? g.penalty_count < 0 || g.penalty_count > penalty_stride_ ||
                              g.penalty_begin < 0 ||
                              static_cast<std::size_t>(g.penalty_begin) +
                                      static_cast<std::size_t>(g.penalty_count) >
                                  batch.penalty_tokens.size()
                        : g.penalty_count != 0)) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} samples with penalty list {} (the model has {} of {} entries; only a "
        "row that samples one position has one, and only a row that writes it (penalty_init) "
        "has entries of its own, {} here, within the batch's)",
        r, row.penalty_slot, num_token_slots_, penalty_stride_, g.penalty_count));
  }
  if (!row.penalty_init) return;
  for (std::int32_t j = 0; j < g.penalty_count; ++j) {
    const gpu::penalty_token& p =
        batch.penalty_tokens[static_cast<std::size_t>(g.penalty_begin + j)];
    if (p.token >= static_cast<token_id>(cfg_.vocab_size) || p.output_count < 0) {
      throw std::invalid_argument(fmt::format(
          "forward: row {} writes penalty entry {} (token {}, count {}); the vocabulary has {}",
          r, j, p.token, p.output_count, cfg_.vocab_size));
    }
  }
}

void llama_model::validate_bias_slot(const forward_batch& batch, std::size_t r) const {
  const forward_row& row = batch.rows[r];
  const gpu::sampling_row& g = row.sampling;
  if (g.bias_list != -1) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} names sampler bias list {} (a row's list is its bias_slot)", r,
        g.bias_list));
  }
  if (row.bias_slot < 0 && !row.bias_init && (!row.sample || g.bias_count == 0)) return;
  if (row.bias_slot < 0 || row.bias_slot >= num_token_slots_ || !row.sample ||
      (!row.bias_init && g.bias_begin != 0)) {
    throw std::invalid_argument(fmt::format(
        "forward: row {} samples with bias list {} (the model has {}; a sampling row with a "
        "bias has one, and only a row that writes it (bias_init) has a slice)",
        r, row.bias_slot, num_token_slots_));
  }
}

void llama_model::ensure_workspace(std::int64_t T, std::int64_t S, std::int64_t R,
                                   std::int64_t P, std::int64_t gathered,
                                   std::int64_t table_entries) {
  const std::int64_t H = cfg_.hidden_size, I = shard_.intermediate_size;
  const std::int64_t NQ = shard_.num_heads * cfg_.head_dim;
  const std::int64_t NK = shard_.num_kv_heads * cfg_.head_dim;
  const std::int64_t V = cfg_.vocab_size;
  workspace& w = *ws_;
  const auto act = static_cast<std::int64_t>(gpu::dtype_size(dev_.compute_dtype()));
  auto grow = [&](gpu::device_buffer& b, std::int64_t bytes) {
    if (static_cast<std::int64_t>(b.size_bytes()) < bytes) {
      b = dev_.allocate(static_cast<std::size_t>(bytes));
      ++w.generation;
    }
  };
  if (T > w.tokens) {
    w.tokens = T;
    for (auto* b : {&w.x, &w.h, &w.o}) grow(*b, T * H * act);
    grow(w.qkv, T * (NQ + 2 * NK) * act);
    for (auto* b : {&w.q, &w.attn}) grow(*b, T * NQ * act);
    grow(w.gate_up, T * 2 * I * act);
    grow(w.act, T * I * act);
  }
  if (S > w.seqs) w.seqs = S;
  if (lora_rank_ > 0) grow(w.lora_tmp, std::max(T, w.tokens) * 3 * lora_rank_ * 4);
  if (R > w.logit_rows) {
    w.logit_rows = R;
    grow(w.picked, R * H * act);
    grow(w.logits, R * V * 4);  // logits are f32 on every device
    if (tp_.size > 1) grow(w.local_logits, R * tp_.vocab.count * 4);
  }
  grow(w.sample_logits, gathered * V * 4);
  if (cfg_.hybrid() && T > 0) {
    const mamba_config& mc = shard_.mamba;  // this rank's heads and groups
    grow(w.proj, T * mc.in_proj_dim() * act);
    grow(w.xbc, T * mc.conv_dim() * act);
    grow(w.ssm_y, T * mc.intermediate() * act);
    grow(w.gated, T * mc.intermediate() * act);
    if (tp_.mamba_group_ranks > 1) grow(w.norm_sums, T * cfg_.mamba.n_groups * 4);
  }
  // ids, positions, slots, token_seq [T]; kv_len [S]; tables; logit_index [R]; sample_index [P];
  // the next-token slots' reads and writes and the penalty lists' counts, source and
  // destination indices [at most S each].
  // Hybrid models: each token's state and save rows [T] and each row's draft check [5 S] too.
  // With a LoRA pool: each token's adapter slot [T].
  const bool hy = cfg_.hybrid();
  grow(w.meta, 4 * ((hy ? 6 : 4) * meta_pad(T) + (lora_rank_ > 0 ? meta_pad(T) : 0) + (hy ? 12 : 7) * meta_pad(S) +
                    meta_pad(table_entries) + meta_pad(R) + meta_pad(P)));
  const auto sampled_bytes = static_cast<std::size_t>(std::max<std::int64_t>(P, 1) * 4);
  // Read only by this launch's copies to the next-token slots, which are enqueued before the
  // next launch can replace it.
  if (w.sampled.size_bytes() < sampled_bytes) w.sampled = dev_.allocate(sampled_bytes);
}

std::size_t llama_model::reserve(gpu::workspace_limits limits) {
  if (limits.max_tokens < 1 || limits.max_seqs < 1 || limits.max_kv_len < 1 ||
      limits.block_size < 1) {
    throw std::invalid_argument("reserve: the step limits must be positive");
  }
  limits.max_sample_rows = std::min(std::max<std::int64_t>(limits.max_sample_rows, limits.max_seqs),
                                    limits.max_tokens);
  limits.vocab = cfg_.vocab_size;
  limits.num_q_heads = shard_.num_heads;  // this rank's
  limits.num_kv_heads = shard_.num_kv_heads;
  limits.head_dim = cfg_.head_dim;
  limits_ = limits;
  graphs_.reset();  // captured with the old buffers
  const std::int64_t blocks_per_seq = (limits.max_kv_len + limits.block_size - 1) / limits.block_size;
  // Every logits row the engine asks for is sampled (prompt logprobs aside), so nothing is
  // gathered apart; every row may write its whole table (three arrays: values, 0..n-1, places).
  ensure_workspace(limits.max_tokens, limits.max_seqs, limits.max_sample_rows,
                   limits.max_sample_rows, 0, 3 * meta_pad(limits.max_seqs * blocks_per_seq));
  const workspace& w = *ws_;
  std::size_t bytes = 0;
  for (const gpu::device_buffer* b : {&w.x, &w.h, &w.o, &w.qkv, &w.q, &w.attn, &w.gate_up, &w.act,
                                      &w.meta, &w.picked, &w.logits, &w.local_logits,
                                      &w.sample_logits,
                                      &w.sampled, &w.proj, &w.xbc, &w.ssm_y, &w.gated,
                                      &w.norm_sums}) {
    bytes += b->size_bytes();
  }
  bytes += reserve_slots(static_cast<std::int32_t>(2 * limits.max_seqs), limits.max_kv_len,
                         limits.block_size);
  return bytes + dev_.reserve_workspace(limits);
}

std::size_t llama_model::reserve_slots(std::int32_t slots, std::int64_t max_kv_len,
                                      std::int32_t block_size) {
  if (slots < 1 || max_kv_len < 1 || block_size < 1) {
    throw std::invalid_argument("reserve_slots: the slots, length and block size must be positive");
  }
  const auto stride = static_cast<std::int32_t>((max_kv_len + block_size - 1) / block_size);
  const auto penalty_stride =
      static_cast<std::int32_t>(std::min<std::int64_t>(max_kv_len, cfg_.vocab_size));
  if (num_token_slots_ < slots || table_stride_ < stride || penalty_stride_ < penalty_stride) {
    num_token_slots_ = std::max(num_token_slots_, slots);
    table_stride_ = std::max(table_stride_, stride);
    penalty_stride_ = std::max(penalty_stride_, penalty_stride);
    const auto n = static_cast<std::size_t>(num_token_slots_);
    next_tokens_ = dev_.allocate(n * 4);
    dev_.fill_zero(next_tokens_.data(), next_tokens_.size_bytes());  // token 0 until written
    tables_ = dev_.allocate(n * static_cast<std::size_t>(table_stride_) * 4);
    dev_.fill_zero(tables_.data(), tables_.size_bytes());  // block 0: valid, never attended
    penalty_lists_ =
        dev_.allocate(n * static_cast<std::size_t>(penalty_stride_) * sizeof(gpu::penalty_token));
    penalty_lens_ = dev_.allocate(n * 4);
    dev_.fill_zero(penalty_lens_.data(), penalty_lens_.size_bytes());  // empty until written
    bias_lists_ = dev_.allocate(n * static_cast<std::size_t>(gpu::max_bias_tokens) *
                                sizeof(gpu::bias_token));
    ++ws_->generation;  // graphs hold the tables' address
  }
  return next_tokens_.size_bytes() + tables_.size_bytes() + penalty_lists_.size_bytes() +
         penalty_lens_.size_bytes() + bias_lists_.size_bytes();
}

forward_output launched_forward::finish() {
  if (samples_) {
    std::vector<gpu::sample_result> res = samples_->take();
    std::size_t j = 0;
    for (const auto& [row, score] : owners_) {
      row_output& o = out_.rows.at(static_cast<std::size_t>(row));
      (score ? o.scores : o.samples).push_back(std::move(res.at(j++)));
    }
  }
  return std::move(out_);
}

launched_forward llama_model::launch(const forward_batch& batch, kv_cache& cache,
                                     const mask_filler& fill) {
  validate(batch, cache);
  fill_ = fill ? &fill : nullptr;
  struct forget_fill {
    const mask_filler*& fill;
    ~forget_fill() { fill = nullptr; }
  } forget{fill_};
  std::optional<decode_graphs::key> shape;
  if (graphs_) shape = graph_shape(batch, cache);
  return shape ? launch_graph(batch, cache, *shape) : launch_eager(batch, cache);
}

launched_forward llama_model::launch_eager(const forward_batch& batch, kv_cache& cache) {
  const step_inputs in = build_step_inputs(
      batch, {cache.block_size(), table_stride_, state_slots(), cfg_.hybrid()});
  const step_arrays a = upload_step(batch, in);
  step_meta m;
  m.T = in.tokens();
  m.R = static_cast<std::int64_t>(in.logit_index.size());
  m.ids = a.ids;
  m.logit_index = a.logit_index;
  m.lora_slots = in.lora ? a.lora : nullptr;
  gpu::attention_batch& ab = m.ab;
  ab.token_seq = a.token_seq;
  ab.positions = a.positions;
  ab.slot_mapping = a.slots;
  ab.seq_kv_len = a.kv_len;
  ab.block_tables = static_cast<const std::int32_t*>(tables_.data());
  ab.num_tokens = static_cast<std::int32_t>(m.T);
  ab.num_seqs = static_cast<std::int32_t>(batch.rows.size());
  ab.max_blocks_per_seq = table_stride_;
  ab.block_size = cache.block_size();
  ab.max_kv_len = in.max_kv;
  m.mb = {a.states, ab.positions, static_cast<std::int32_t>(m.T),  // a hybrid's state rows
          in.draft_checks.empty() ? nullptr : a.saves};
  states_.before(batch);  // a hybrid's state copies and restores (nothing without Mamba-2)
  body_->run(*this, m, cache);
  states_.after(batch);
  return finish_eager(batch, in, a);
}

llama_model::step_arrays llama_model::upload_step(const forward_batch& batch,
                                                  const step_inputs& in) {
  const std::int64_t T = in.tokens(), S = static_cast<std::int64_t>(batch.rows.size());
  const auto R = static_cast<std::int64_t>(in.logit_index.size());
  const auto P = static_cast<std::int64_t>(in.sample_index.size());
  // The table entries written to the device's (three arrays).
  const std::int64_t table_meta = 3 * meta_pad(static_cast<std::int64_t>(in.table_values.size()));
  ensure_workspace(T, S, R, P, in.samples_in_place() ? 0 : P, table_meta);
  std::vector<std::int32_t> packed;
  packed.reserve(static_cast<std::size_t>(7 * meta_pad(T) + table_meta + meta_pad(R) +
                                          meta_pad(P) + 12 * meta_pad(S)));
  auto* meta = static_cast<std::int32_t*>(ws_->meta.data());
  // Where each array lands in the metadata (the buffer does not move).
  auto put = [&](const std::vector<std::int32_t>& v) { return meta + pack(packed, v); };
  step_arrays a;
  std::int32_t* ids = put(in.ids);
  a.ids = ids;
  a.positions = put(in.positions);
  a.slots = put(in.slots);
  a.token_seq = put(in.token_seq);
  a.kv_len = put(in.kv_len);
  a.logit_index = put(in.logit_index);
  a.sample_index = put(in.sample_index);
  const std::int32_t* feed_src = put(in.feed_src);
  const std::int32_t* feed_dst = put(in.feed_dst);
  a.keep_src = put(in.keep_src);
  a.keep_dst = put(in.keep_dst);
  a.count_src = put(in.count_src);
  a.count_dst = put(in.count_dst);
  const std::int32_t* table_values = put(in.table_values);
  const std::int32_t* table_iota = put(in.table_iota);
  const std::int32_t* table_places = put(in.table_places);
  a.states = put(in.state_rows);
  a.saves = put(in.save_rows);
  a.checks = put(in.draft_checks);
  a.lora = put(in.lora_rows);
  dev_.upload(meta, packed.data(), packed.size() * sizeof(std::int32_t));
  feed_tokens(feed_src, feed_dst, ids, static_cast<std::int32_t>(in.feed_src.size()));
  write_tables(table_values, table_iota, table_places,
               static_cast<std::int32_t>(in.table_values.size()));
  write_penalty_lists(batch);
  write_bias_lists(batch);
  return a;
}

namespace {

// The logits rows a row has in the workspace, from its logits_begin: every position's (all), or
// the sampled positions' (last).
std::int64_t logits_rows(const forward_row& row) {
  if (row.logits == logits_mode::all) return static_cast<std::int64_t>(row.tokens.size());
  return row.sample ? row.num_sample : 1;
}

}  // namespace

launched_forward llama_model::finish_eager(const forward_batch& batch, const step_inputs& in,
                                           const step_arrays& a) {
  const std::int64_t V = cfg_.vocab_size;
  const auto R = static_cast<std::int64_t>(in.logit_index.size());
  workspace& w = *ws_;
  launched_forward launched;
  launched.out_.rows.resize(batch.rows.size());
  if (R == 0) return launched;
  const auto logits = w.logits.view(gpu::dtype::f32, R, V);
  if (!in.sample_index.empty()) {
    gpu::tensor_view sl = logits;
    if (!in.samples_in_place()) {
      sl = w.sample_logits.view(gpu::dtype::f32, static_cast<std::int64_t>(in.sample_index.size()),
                                V);
      dev_.gather_rows(logits, a.sample_index, sl);
    }
    sample_rows(batch, sl, in.entries, launched);
    if (!in.draft_checks.empty()) {  // sampled entries of one row are consecutive (validated)
      dev_.select_draft_states(static_cast<const std::int32_t*>(w.sampled.data()), a.ids,
                               reinterpret_cast<const gpu::draft_states*>(a.checks),
                               static_cast<std::int32_t>(in.draft_checks.size() / 5),
                               states_.conv_buffer(), states_.ssm_buffer());
    }
    keep_next_tokens(a.keep_src, a.keep_dst, static_cast<std::int32_t>(in.keep_src.size()));
    count_penalties(a.count_src, a.count_dst, static_cast<std::int32_t>(in.count_src.size()));
  }
  download_hidden(batch, in, launched);
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    if (in.logits_begin[r] < 0 || !(batch.return_logits || batch.rows[r].return_logits)) continue;
    const std::int64_t n = logits_rows(batch.rows[r]);
    std::vector<float>& out = launched.out_.rows[r].logits;
    out.resize(static_cast<std::size_t>(n * V));
    dev_.download(out.data(), static_cast<const float*>(w.logits.data()) + in.logits_begin[r] * V,
                  n * V * sizeof(float));
  }
  return launched;
}

// The rows' last logits positions of the workspace's `picked` (the final norm's output, in the
// compute dtype) as f32, for the rows with return_hidden.
void llama_model::download_hidden(const forward_batch& batch, const step_inputs& in,
                                  launched_forward& launched) {
  const std::int64_t H = cfg_.hidden_size;
  const gpu::dtype dt = dev_.compute_dtype();
  const std::size_t width = gpu::dtype_size(dt);
  std::vector<unsigned char> bytes;
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    const forward_row& row = batch.rows[r];
    if (!row.return_hidden || in.logits_begin[r] < 0) continue;
    const std::int64_t last = in.logits_begin[r] + logits_rows(row) - 1;
    bytes.resize(static_cast<std::size_t>(H) * width);
    dev_.download(bytes.data(),
                  static_cast<const unsigned char*>(ws_->picked.data()) + last * H * width,
                  bytes.size());
    std::vector<float>& out = launched.out_.rows[r].hidden;
    out.resize(static_cast<std::size_t>(H));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = gpu::float_at(dt, bytes.data(), i);
  }
}

}  // namespace courier::model
