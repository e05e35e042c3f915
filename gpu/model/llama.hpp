#pragma once
// The Llama-family decoder (Llama 2/3, Qwen2/2.5, Qwen3), written once against the device
// interface: embedding, per layer [residual + RMSNorm, fused QKV linear (+bias), q/k norm + RoPE
// + paged KV write (one op), attention, O, residual + RMSNorm, fused gate/up linear, SiLU-mul,
// down], final norm, lm_head, sampling; and NemotronH hybrids. Weights read or made:
// llama_weights.cpp; each architecture's layers: model_body.hpp; the forward: llama.cpp; the
// pieces the bodies share and sampling: llama_body.cpp; decode steps as graphs: llama_graph.cpp.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/decode_graphs.hpp"
#include "gpu/model/forward_batch.hpp"
#include "gpu/model/step_inputs.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "gpu/model/mamba_states.hpp"
#include "gpu/model/model_config.hpp"
#include "gpu/model/tensor_parallel.hpp"

namespace courier::model {

class weight_store;
class model_body;

// A forward pass enqueued by llama_model::launch: its output once the device has computed it.
class launched_forward {
 public:
  // Whether finish() would return at once; never blocks.
  bool ready() const { return !samples_ || samples_->ready(); }
  // Blocks until ready(); safe from another thread while the owner holds this.
  void wait() const {
    if (samples_) samples_->wait();
  }
  // The samples in flight (null when the step samples nothing), for a waiter to hold.
  const std::shared_ptr<gpu::pending_samples>& samples() const { return samples_; }
  // The output; waits first. Throws when the device failed the step. Call it once.
  forward_output finish();

 private:
  friend class llama_model;
  forward_output out_;                       // logits already on the host; samples to come
  std::shared_ptr<gpu::pending_samples> samples_;
  // Per result of the sampling launch, in order: the row it belongs to and whether it is a
  // score (row_output::scores) or a sample.
  std::vector<std::pair<std::int32_t, bool>> owners_;
};

// Writes the allowed-token masks of a launch (forward_batch::mask_words, laid out by the
// rows' mask_begin) once its forward pass is enqueued and before its sampling is: a grammar's
// masks for step N + 1 depend on what step N sampled, which the host may learn only while
// N + 1's forward pass already runs.
using mask_filler = std::function<void(std::vector<std::uint32_t>& mask_words)>;

class llama_model {
 public:
  // Reads DIR (config.json, generation_config.json, safetensors) and uploads the weights.
  // Throws model_error naming the file and the problem (missing tensor, wrong shape or dtype).
  // On a device that joined a tensor-parallel group (device::join_group), the model is that
  // rank's shard (tensor_parallel.hpp: its heads, KV heads, MLP columns and vocabulary range),
  // and its forward pass takes part in the group's collectives: every rank must run the same
  // launches in the same order, each with its own KV cache of shard_config()'s KV heads. A model
  // that cannot be split so is a model_error with the reason.
  static std::unique_ptr<llama_model> load(const std::string& dir, gpu::device& dev);
  // A model of cfg's shape with random weights made on the device (gpu/random_fill.hpp): linear
  // weights uniform in +-1/sqrt(fan_in), norms near 1, biases near 0; the same seed gives the
  // same weights. For benchmarks, which need the shape and not the values.
  static std::unique_ptr<llama_model> random(model_config cfg, gpu::device& dev,
                                             std::uint64_t seed);

  const model_config& config() const { return cfg_; }
  // What this rank computes: config() with its query heads, KV heads and MLP columns under
  // tensor parallelism (config() itself on a device of no group). Its KV cache is of this shape.
  const model_config& shard_config() const { return shard_; }
  const tp_layout& tensor_parallel() const { return tp_; }
  gpu::device& device() const { return dev_; }
  std::size_t weight_bytes() const { return weight_bytes_; }  // this rank's

  // One forward pass over a ragged batch. Every row's block table must cover its tokens and
  // the cache must hold every earlier position of the row. Throws std::invalid_argument on a
  // malformed batch (checked before anything runs).
  forward_output forward(const forward_batch& batch, kv_cache& cache) {
    return launch(batch, cache).finish();
  }
  // forward(), without waiting for the device: the pass is enqueued, and the next launch may be
  // enqueued behind it before its output is read, so the device never waits for the host
  // between steps. Rows with a token_slot read their token on the device from that next-token
  // slot, which a launch before wrote (next_slot; which launch, and that it succeeded, is the
  // caller's to know: the engine's token_slots). Rows asking for logits on the host wait
  // for them here. `fill`, when given, writes the masks between the forward pass and sampling
  // (batch.mask_words gives their size; its contents are what `fill` starts from).
  launched_forward launch(const forward_batch& batch, kv_cache& cache,
                          const mask_filler& fill = {});
  // What launch() checks first: std::invalid_argument for a malformed batch, before anything
  // runs (tp_peers checks on rank 0 before any rank starts).
  void validate(const forward_batch& batch, const kv_cache& cache) const;

  // The memory plan: allocates the activation workspace and the device's own (attention,
  // sampling) for any step within `limits` (its max_tokens, max_seqs, max_kv_len,
  // max_sample_rows and block_size are read; the heads and vocab come from the model), so that
  // forward() allocates no device memory for such a step. Returns the bytes this reserves, for
  // the KV cache to be sized from what is left. A step beyond the limits still runs and grows
  // the workspace: rows asking for every position's logits (prompt logprobs) are one such step.
  std::size_t reserve(gpu::workspace_limits limits);
  // Next-token slots (forward_row::token_slot, next_slot), and as many device block-table rows
  // (table_slot) of table_stride() entries, penalty lists (penalty_slot) of penalty_stride()
  // and bias lists (bias_slot) of gpu::max_bias_tokens: 2 * max_seqs after reserve(), 0 before;
  // their contents survive every launch, a failed one aside.
  std::int32_t token_slots() const { return num_token_slots_; }
  // Grows the slots to at least `slots`, with tables for max_kv_len positions in blocks of
  // block_size (reserve() calls it for 2 * max_seqs; generate_one and tests, which step a
  // model without reserving, call it themselves). Growing loses what the slots held. Returns
  // the slots' bytes.
  std::size_t reserve_slots(std::int32_t slots, std::int64_t max_kv_len, std::int32_t block_size);
  // A hybrid's recurrent-state rows (forward_row::state_slot): reserve_states(n, d) allocates
  // n of them, then d draft rows, state_bytes_per_slot() each, and returns their bytes; a row
  // past the n is then an error (without reserving, as tests and generate_one do, rows past them
  // grow the states, losing what they held). A step's rows verifying drafts keep their state
  // after each draft position in the draft rows (one per draft: at most d drafts a step; none
  // without them), so the state after the last accepted one can be put back. With graphs on
  // (enable_graphs before this), one more row after them takes the padding rows' state: a
  // hybrid's decode steps replay graphs only then.
  std::size_t reserve_states(std::int32_t slots, std::int32_t draft_rows = 0);
  std::size_t state_bytes_per_slot() const { return states_.bytes_per_row(); }
  std::int32_t state_slots() const { return states_.rows(); }
  std::int32_t draft_state_rows() const { return states_.draft_rows(); }
  // The host tier behind the state rows (forward_batch::state_copies): n rows of
  // state_bytes_per_slot() in host memory the device copies to and from; returns their bytes.
  std::size_t reserve_host_states(std::int32_t rows);
  std::int32_t host_state_rows() const { return states_.host_rows(); }
  // Runs state copies in stream order for a step without rows (launch() runs a batch's own
  // before its rows): the copies of a plan that only swaps sequences in or out.
  void copy_states(const std::vector<state_copy>& copies);
  std::int32_t table_stride() const { return table_stride_; }  // blocks of max_kv_len
  // Entries of each slot's penalty list (forward_row::penalty_slot): min(max_kv_len, vocab), the
  // most distinct tokens a sequence has.
  std::int32_t penalty_stride() const { return penalty_stride_; }

  // LoRA adapters (lora_adapter.hpp): reserve_loras allocates a pool of `slots` adapters of
  // rank up to max_rank for every linear an adapter may target (zeros: each slot adds nothing
  // until loaded) and returns its bytes. load_lora writes
  // `adapter` (rank <= max_rank) into `slot`, in stream order: launches enqueued before still run
  // with what was there. A row runs with slot forward_row::lora_slot; decode graphs of steps
  // with such rows hold every pool's op (an adapter loaded later may target any linear).
  std::size_t reserve_loras(std::int32_t slots, std::int32_t max_rank);
  void load_lora(std::int32_t slot, const lora_adapter& adapter);
  std::int32_t lora_slots() const { return lora_slots_; }
  std::int32_t lora_rank() const { return lora_rank_; }

  // Decode steps as graphs (device::capture; CUDA graphs on the CUDA backend): a step whose
  // every row feeds one token and samples it, with up to max_batch rows, is padded to the next
  // size of a ladder (1, 2, 4, 8, then multiples of 16), its attention planned for a
  // power-of-two context tier, and replays that shape's graph, captured the first time the
  // shape is seen (that step runs directly). Padding rows write no KV, and a hybrid's write only
  // its padding state row (reserve_states). After reserve(); max_batch is capped by its limits;
  // 0 turns graphs off. Returns the bytes of the graphs' metadata buffer. Outputs are bit-identical to running the same padded step directly.
  std::size_t enable_graphs(std::int32_t max_batch);
  std::size_t num_graphs() const;     // captured and kept now
  std::uint64_t graph_steps() const;  // steps that replayed a graph

  ~llama_model();

 private:
  struct layer;
  struct lora_pool;
  struct workspace;
  // One step's sizes and where its metadata is in device memory.
  struct step_meta {
    std::int64_t T = 0, R = 0;  // tokens fed, logits rows
    const std::int32_t* ids = nullptr;
    const std::int32_t* logit_index = nullptr;
    gpu::attention_batch ab;
    gpu::mamba_batch mb;  // hybrid models: each token's state row
    const std::int32_t* lora_slots = nullptr;  // each token's LoRA slot; null: none has one
    bool every_lora = false;  // apply every pool, even one no loaded adapter targets (graphs)
  };
  // out += the LoRA of layer L's linear `l` on x, for the tokens whose rows run with an adapter
  // that targets it (llama_lora.cpp); nothing for a step without one.
  // Under tensor parallelism: the rows of module `part` of linear `l` (numbered within the
  // module, in the checkpoint) this rank computes, in its order; and the input columns it reads.
  std::vector<tp_range> lora_rows(lora_linear l, std::size_t part, std::int64_t rows) const;
  tp_range lora_cols(lora_linear l, std::int64_t in) const;
  void apply_lora(const layer& L, lora_linear l, gpu::tensor_view x, gpu::tensor_view out,
                  const step_meta& m);
  llama_model(gpu::device& dev, model_config cfg);
  void upload_inv_freq();
  // The architecture's layers (model_body.hpp), chosen at load: they make their weights and run
  // their layer loop on what is below.
  friend class model_body;
  friend class llama_family_body;
  friend class nemotron_h_body;
  // The pieces every body shares (llama_body.cpp), on the workspace's x, h, o: the embedding
  // into x, layer li's input norm of x into h (after layer 0, o added to x first), an attention
  // layer (h to o: q/k/v, rotary and q/k norm where the model has them, attention, o_proj), and
  // the final norm and lm_head of the logits rows.
  void embed(const step_meta& m);
  void input_norm(const step_meta& m, std::int32_t li, const gpu::device_buffer& norm);
  void run_attention(const layer& L, const gpu::kv_cache_view& kv, const step_meta& m);
  void run_head(const step_meta& m);
  gpu::tensor_view act(const gpu::device_buffer& b, std::int64_t rows, std::int64_t cols) const;
  gpu::tensor_view weight(const gpu::device_buffer& b, std::int64_t rows,
                          std::int64_t cols) const;
  // Enqueues the sampling of every sampled position of `batch` from sl (step_inputs' entries),
  // into launched.
  void sample_rows(const forward_batch& batch, gpu::tensor_view sl,
                   const std::vector<sample_entry>& entries, launched_forward& launched);
  // ids[dst_index[i]] = next_tokens_[src_index[i]], for i < n (all device memory): the rows with
  // a token_slot get their tokens.
  void feed_tokens(const std::int32_t* src_index, const std::int32_t* dst_index, std::int32_t* ids,
                   std::int32_t n);
  // next_tokens_[dst_index[i]] = sampled[src_index[i]], after the sampling: rows' next_slot.
  void keep_next_tokens(const std::int32_t* src_index, const std::int32_t* dst_index,
                        std::int32_t n);
  // tables_[places[i]] = values[i] for i < n (device memory): the rows' table entries.
  void write_tables(const std::int32_t* values, const std::int32_t* iota,
                    const std::int32_t* places, std::int32_t n);
  // Replaces the penalty lists of the rows with penalty_init by their slices (uploads, in
  // stream order, before the step's ops).
  void write_penalty_lists(const forward_batch& batch);
  // Writes the bias lists of the rows with bias_init from their slices (uploads, in stream
  // order, before the step's ops).
  void write_bias_lists(const forward_batch& batch);
  // After the sampling: list dst_slot[i] counts sampled[src_index[i]] (device memory, i < n).
  void count_penalties(const std::int32_t* src_index, const std::int32_t* dst_slot,
                       std::int32_t n);
  // The graph that runs `batch`, or nothing when it runs op by op.
  std::optional<decode_graphs::key> graph_shape(const forward_batch& batch,
                                                const kv_cache& cache) const;
  launched_forward launch_eager(const forward_batch& batch, kv_cache& cache);
  // Where an eager step's arrays (step_inputs') are in the workspace's metadata on the device.
  struct step_arrays {
    const std::int32_t *ids = nullptr, *positions = nullptr, *slots = nullptr,
                       *token_seq = nullptr, *kv_len = nullptr,
                       *logit_index = nullptr, *sample_index = nullptr, *keep_src = nullptr,
                       *keep_dst = nullptr, *count_src = nullptr, *count_dst = nullptr,
                       *states = nullptr, *saves = nullptr, *checks = nullptr, *lora = nullptr;
  };
  // An eager step's first ops: the workspace grown to fit, its arrays packed and uploaded in
  // one copy, the fed tokens, table entries, penalty and bias lists written.
  step_arrays upload_step(const forward_batch& batch, const step_inputs& in);
  // Its last: sampling (gathered apart unless in place), the draft states kept, the sampled
  // tokens kept and counted, the hidden states and logits asked for downloaded.
  launched_forward finish_eager(const forward_batch& batch, const step_inputs& in,
                                const step_arrays& a);
  void download_hidden(const forward_batch& batch, const step_inputs& in,
                       launched_forward& launched);
  launched_forward launch_graph(const forward_batch& batch, kv_cache& cache,
                                decode_graphs::key shape);
  step_meta graph_meta(decode_graphs::key shape) const;
  // validate's checks of row r, in this order.
  void validate_tokens(const forward_row& row, std::size_t r, const kv_cache& cache) const;
  void validate_sampling(const forward_row& row, std::size_t r) const;
  void validate_slots(const forward_batch& batch, std::size_t r) const;
  void validate_states(const forward_row& row, std::size_t r, std::int32_t& drafts) const;
  void validate_lists(const forward_batch& batch, std::size_t r) const;
  void validate_penalty_slot(const forward_batch& batch, std::size_t r) const;
  void validate_snapshots(const forward_batch& batch) const;
  void validate_bias_slot(const forward_batch& batch, std::size_t r) const;
  const mask_filler* fill_ = nullptr;  // the running launch's, for sample_rows
  gpu::device_buffer next_tokens_;  // [num_token_slots_] int32: each slot's next token
  // [num_token_slots_, table_stride_] int32: each slot's block table; every entry a valid block
  // id (zeros until written), so that padding rows may read any row.
  gpu::device_buffer tables_;
  // [num_token_slots_, penalty_stride_] penalty_token, and [num_token_slots_] int32 lengths:
  // each slot's penalty list.
  gpu::device_buffer penalty_lists_, penalty_lens_;
  // [num_token_slots_, gpu::max_bias_tokens] bias_token: each slot's logit bias.
  gpu::device_buffer bias_lists_;
  std::int32_t num_token_slots_ = 0;
  std::int32_t table_stride_ = 0;
  std::int32_t lora_slots_ = 0;  // the LoRA pool: slots of rank lora_rank_ (0: none)
  std::int32_t lora_rank_ = 0;
  std::int32_t penalty_stride_ = 0;
  // Grows the workspace to hold T tokens, S rows, R logits rows, P sampled positions (of which
  // gathered: those copied apart because P != R) and `table_entries` block-table entries.
  void ensure_workspace(std::int64_t T, std::int64_t S, std::int64_t R, std::int64_t P,
                        std::int64_t gathered, std::int64_t table_entries);

  gpu::device& dev_;  // Borrowed; outlives the model.
  model_config cfg_;
  tp_layout tp_;        // this rank's share (the whole model in a group of one)
  model_config shard_;  // cfg_ with tp_'s heads, KV heads and MLP columns
  std::unique_ptr<const model_body> body_;  // the architecture's layers (model_body.hpp)
  mamba_states states_;  // a hybrid's Mamba-2 states (no layers otherwise)
  std::vector<layer> layers_;
  gpu::device_buffer embed_, final_norm_, lm_head_;  // lm_head_ empty when tied
  gpu::device_buffer inv_freq_;
  std::size_t weight_bytes_ = 0;
  std::unique_ptr<workspace> ws_;        // sized by reserve(); grows only past its limits
  gpu::workspace_limits limits_;         // what reserve() was given (zeros before)
  std::unique_ptr<decode_graphs> graphs_;  // null: graphs off
};

}  // namespace courier::model
