#pragma once
// The device interface: memory and the ops one forward pass needs. The model code is written once
// against it; gpu/sim (the CPU, f32) and gpu/cuda implement it. Ops are asynchronous in stream
// order on a real device; download() and synchronize() wait.
//
// Shapes are written [rows, cols]; T is the number of tokens in the batch, H the hidden size.
// Activation tensors have compute_dtype(); weights have weight_dtype().
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/collectives.hpp"
#include "gpu/mamba.hpp"
#include "gpu/sampling.hpp"
#include "gpu/tensor.hpp"

namespace courier::gpu {

class device;

// A recorded sequence of ops (a CUDA graph on the CUDA backend) that replay() enqueues again with
// the same arguments: the same pointers, sizes and plans. What changes between replays is only
// what device memory holds. Invariant: every buffer the ops use outlives the graph, at the same
// address.
class device_graph {
 public:
  virtual ~device_graph() = default;
  virtual void replay() = 0;
};

// Samples enqueued by device::sample_async: in host memory once the device has computed them.
class pending_samples {
 public:
  virtual ~pending_samples() = default;
  // Whether take() would return at once. Never blocks; safe while another thread is in wait().
  virtual bool ready() = 0;
  // Blocks until ready(). Any thread may call it (the engine's completion waiter does).
  virtual void wait() = 0;
  // The results, one per logits row in order; waits first. Throws when the device failed the
  // sampling. Call it once.
  virtual std::vector<sample_result> take() = 0;
};

// Samples computed before sample_async returned (a device that samples synchronously).
class ready_samples final : public pending_samples {
 public:
  explicit ready_samples(std::vector<sample_result> results) : results_(std::move(results)) {}
  bool ready() override { return true; }
  void wait() override {}
  std::vector<sample_result> take() override { return std::move(results_); }

 private:
  std::vector<sample_result> results_;
};

// One copy of device::copy_async: n bytes from src to dst, each device memory or allocate_host()
// memory.
struct copy_span {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t n = 0;
};

// Copies enqueued by device::copy_async: done once ready().
class pending_copies {
 public:
  virtual ~pending_copies() = default;
  // Whether the copies are done. Never blocks; safe while another thread is in wait().
  virtual bool ready() = 0;
  // Blocks until ready(). Any thread may call it. Throws when the device failed the copies.
  virtual void wait() = 0;
};

// Copies done before copy_async returned (a device without a copy stream).
class ready_copies final : public pending_copies {
 public:
  bool ready() override { return true; }
  void wait() override {}
};

// A point in the device's stream of work (device::timestamp; a timing CUDA event on CUDA). The
// time between two is what the device spent on the work enqueued between them, measured without
// the host waiting in between.
class device_timestamp {
 public:
  virtual ~device_timestamp() = default;
};

// The work a device was given, as the runtime under it counts it when it is queued: calls
// outside graphs (eager), calls inside the graphs launched (each launch counts its graph's calls
// again), and graph launches. device::counted_work; subtract two to count what lies between.
struct work_counts {
  struct tally {
    std::int64_t kernels = 0;
    std::int64_t library_calls = 0;  // cuBLASLt matmuls, NCCL collectives
    std::int64_t copies_h2d = 0, bytes_h2d = 0;
    std::int64_t copies_d2h = 0, bytes_d2h = 0;
    std::int64_t copies_d2d = 0, bytes_d2d = 0;
    std::int64_t memsets = 0;

    template <class Op>  // member by member
    tally zip(const tally& o, Op op) const {
      return {op(kernels, o.kernels),       op(library_calls, o.library_calls),
              op(copies_h2d, o.copies_h2d), op(bytes_h2d, o.bytes_h2d),
              op(copies_d2h, o.copies_d2h), op(bytes_d2h, o.bytes_d2h),
              op(copies_d2d, o.copies_d2d), op(bytes_d2d, o.bytes_d2d),
              op(memsets, o.memsets)};
    }
  };
  tally eager, in_graphs;
  std::int64_t graph_launches = 0;
};
inline work_counts::tally operator+(const work_counts::tally& a, const work_counts::tally& b) {
  return a.zip(b, std::plus<>());
}
inline work_counts::tally operator-(const work_counts::tally& a, const work_counts::tally& b) {
  return a.zip(b, std::minus<>());
}
inline work_counts operator-(const work_counts& a, const work_counts& b) {
  return {a.eager - b.eager, a.in_graphs - b.in_graphs, a.graph_launches - b.graph_launches};
}

// The default timestamp: the host clock, once the device has done everything enqueued.
class host_timestamp final : public device_timestamp {
 public:
  explicit host_timestamp(std::chrono::steady_clock::time_point t) : t_(t) {}
  std::chrono::steady_clock::time_point time() const { return t_; }

 private:
  std::chrono::steady_clock::time_point t_;
};

// The largest step an engine will run. Devices and models size their workspaces from it once, at
// start, so that no step within it allocates device memory.
struct workspace_limits {
  std::int64_t max_tokens = 0;       // tokens fed per step (scheduler.max_batched_tokens)
  std::int64_t max_seqs = 0;         // rows per step (scheduler.max_num_seqs)
  std::int64_t max_kv_len = 0;       // a row's context, in tokens (model.max_model_len)
  std::int64_t max_sample_rows = 0;  // positions sampled per step (rows x (1 + drafts))
  std::int64_t vocab = 0;
  std::int32_t num_q_heads = 0, num_kv_heads = 0, head_dim = 0;
  std::int32_t block_size = 0;       // KV page size, in tokens
};

// Device memory, move-only; freed by the device that made it. Invariant: a buffer never outlives
// its device.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(device* owner, void* data, std::size_t size_bytes) noexcept
      : owner_(owner), data_(data), size_bytes_(size_bytes) {}
  device_buffer(device_buffer&& o) noexcept { swap(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    device_buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer();

  void* data() const { return data_; }
  std::size_t size_bytes() const { return size_bytes_; }
  explicit operator bool() const { return data_ != nullptr; }
  tensor_view view(dtype t, std::int64_t rows, std::int64_t cols) const {
    return {data_, t, rows, cols};
  }

 private:
  void swap(device_buffer& o) noexcept {
    std::swap(owner_, o.owner_);
    std::swap(data_, o.data_);
    std::swap(size_bytes_, o.size_bytes_);
  }
  device* owner_ = nullptr;  // Borrowed.
  void* data_ = nullptr;     // Owned, through owner_.
  std::size_t size_bytes_ = 0;
};

class device {
 public:
  virtual ~device() = default;

  virtual std::string name() const = 0;
  // Whether the Mamba-2 ops below run here (hybrid models); a device that says no refuses them.
  virtual bool runs_mamba() const { return false; }
  virtual dtype compute_dtype() const = 0;  // activations and KV pages
  virtual dtype weight_dtype() const = 0;   // what load_weight produces
  // Bytes this device may give to weights, workspaces and KV pages together.
  virtual std::size_t memory_budget_bytes() const = 0;

  // --- memory ---
  [[nodiscard]] virtual device_buffer allocate(std::size_t size_bytes) = 0;
  virtual void release(void* data) noexcept = 0;  // called by ~device_buffer
  virtual void upload(void* dst, const void* src, std::size_t size_bytes) = 0;
  virtual void download(void* dst, const void* src, std::size_t size_bytes) = 0;
  virtual void fill_zero(void* dst, std::size_t size_bytes) = 0;
  virtual void synchronize() = 0;
  // Converts a host tensor (f32, bf16 or f16) to weight_dtype() in a new buffer.
  [[nodiscard]] virtual device_buffer load_weight(const host_tensor& t) = 0;
  // out[i] = random_fill_value(seed, i, center, scale) (gpu/random_fill.hpp), rounded to out's
  // dtype: random weights for benchmarks, generated where they live.
  virtual void fill_random(tensor_view out, std::uint64_t seed, float center, float scale) = 0;
  // Allocates the device's own workspaces (attention, sampling) for any step within `limits`;
  // returns the bytes they hold. A step beyond the limits still runs, growing them. The sim
  // device computes in host memory it does not count, so it reserves nothing.
  virtual std::size_t reserve_workspace(const workspace_limits& limits) {
    (void)limits;
    return 0;
  }

  // A timestamp at this point of the stream. The default waits for the device and reads the host
  // clock, which is right for a device that runs each op as it is called (the sim).
  [[nodiscard]] virtual std::unique_ptr<device_timestamp> timestamp() {
    synchronize();
    return std::make_unique<host_timestamp>(std::chrono::steady_clock::now());
  }
  // Milliseconds from a to b, both made by this device's timestamp(), b after a; waits for b.
  virtual double elapsed_ms(const device_timestamp& a, const device_timestamp& b) {
    const auto& x = dynamic_cast<const host_timestamp&>(a);
    const auto& y = dynamic_cast<const host_timestamp&>(b);
    return std::chrono::duration<double, std::milli>(y.time() - x.time()).count();
  }

  // The work given to this device so far, where the runtime under it counts it: the CUDA
  // emulator's does (gpu/cuda_emu); a GPU's runtime and the sim do not (nullopt).
  virtual std::optional<work_counts> counted_work() const { return std::nullopt; }

  // Records the ops `body` enqueues, without running them, into a graph. The ops may not allocate,
  // upload, download or sample, and must not be planned from anything but their arguments. A
  // device that cannot record returns nullptr (the caller runs the ops directly).
  [[nodiscard]] virtual std::unique_ptr<device_graph> capture(const std::function<void()>& body) {
    (void)body;
    return nullptr;
  }

  // Makes this device the calling thread's current one (CUDA: cudaSetDevice). A thread that
  // drives one device needs nothing; one that drives several in turn (loading each rank of a
  // tensor-parallel model) calls it before each device's calls.
  virtual void bind_thread() {}

  // --- tensor parallelism (gpu/collectives.hpp) ---
  // Makes this device rank c->rank() of c's group of c->size() ranks; a device that joined none
  // is a group of one, whose all_reduce_sum changes nothing and all_gather_cols copies.
  virtual void join_group(std::shared_ptr<collectives> c) { group_ = std::move(c); }
  std::int32_t group_rank() const { return group_ ? group_->rank() : 0; }
  std::int32_t group_size() const { return group_ ? group_->size() : 1; }

  // --- ops ---
  // out[T, H] = the embedding of ids[t] (device memory [T]) from a table holding the rows of
  // ids [first_id, first_id + table.rows): the whole vocabulary (first_id 0), or one rank's
  // range of it (a vocab-parallel embedding, summed over the ranks after). An id outside the
  // range gives a zero row.
  virtual void embedding(const std::int32_t* ids, tensor_view table, std::int64_t first_id,
                         tensor_view out) = 0;
  // x [R, C] becomes the sum over the group's ranks of their x, in stream order
  // (collectives::all_reduce_sum): the outputs of row-parallel linears.
  virtual void all_reduce_sum(tensor_view x) {
    if (group_) group_->all_reduce_sum(x);
  }
  // out [R, group_size() * C] (f32) = every rank's in [R, C] side by side, rank r's at columns
  // [r * C, (r + 1) * C), in stream order: the vocab-parallel lm_head's logits.
  virtual void all_gather_cols(tensor_view in, tensor_view out) {
    if (group_) {
      group_->all_gather_cols(in, out);
    } else {
      copy_device(out.data, in.data, static_cast<std::size_t>(in.rows * in.cols) * 4);
    }
  }
  // out[T, H] = x / rms(x) * w, per row; w is [1, H] (weight dtype).
  virtual void rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) = 0;
  // residual[T, H] += x; out = rms_norm(residual, w).
  virtual void add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                            tensor_view out) = 0;
  // out[M, N] = x[M, K] * w[N, K]^T (+ bias[1, N] when bias.data). Each out element is reduced
  // over K in an order that does not depend on M, so results do not depend on the batch.
  virtual void linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) = 0;
  // What attention needs from the fused projection qkv[T, (nq + 2 * nk) * head_dim], whose row t
  // is [q | k | v] (nq query heads, then nk key and nk value heads, head_dim each). Per token t:
  // each q head is RMS-normed over its head_dim with q_norm [1, head_dim] when q_norm.data (Qwen3),
  // then rotated (HF rotate_half; inv_freq is device memory [head_dim / 2], f32;
  // angle = f32(f32(positions[t]) * inv_freq[i])) and written to q_out[T, nq * head_dim]; each k
  // head likewise (k_norm) into cache.k at slot slot_mapping[t]; v is copied into cache.v there.
  // A slot outside the cache (-1: a padding token) writes no k or v; q_out is written anyway.
  // cache.num_kv_heads == nk and cache.head_dim == head_dim.
  virtual void qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads,
                                 std::int32_t num_kv_heads, std::int32_t head_dim,
                                 tensor_view q_norm, tensor_view k_norm, float eps,
                                 const std::int32_t* positions, const float* inv_freq,
                                 const std::int32_t* slot_mapping, kv_cache_view cache,
                                 tensor_view q_out) = 0;
  // Plans the attention of one step, once, for every layer's attention() after it: the split-K
  // schedule and the cutting of the batch into tiles (CUDA: computed on the host from the sizes,
  // the tile list written on the device) depend on the batch and the heads, not on the layer. The
  // attention() calls up to the next plan_attention must pass this batch (the same token_seq
  // array, the same sizes) and a q of num_q_heads heads; a device refuses any other.
  virtual void plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                              std::int32_t num_kv_heads, std::int32_t head_dim) = 0;
  // out[T, nq * head_dim] = softmax(q k^T * scale) v over each token's causal context (GQA:
  // query head h reads kv head h / (nq / nk)). Keys are reduced in position order. The batch was
  // planned by plan_attention.
  virtual void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch,
                         float scale, tensor_view out) = 0;
  // out[T, I] = silu(gate) * up, where gate_up[T, 2 * I] holds row t = [gate | up] (the fused
  // gate/up projection): out[t, i] = silu(gate_up[t, i]) * gate_up[t, I + i].
  virtual void silu_mul(tensor_view gate_up, tensor_view out) = 0;
  // out[n, C] = x[rows[i], :]; rows is device memory [n].
  virtual void gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) = 0;
  // Samples one token per row of logits[R, V] (f32); rows.size() == R. Waits for the result.
  virtual std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) = 0;
  // sample(), enqueued: returns without waiting for the device, and also writes each row's token
  // to tokens_out[r] (device memory [R], int32; 0 for no_allowed_token), where ops enqueued later
  // can read it. The logits
  // may be overwritten by later ops (the device has read them by then, in stream order). The
  // default samples synchronously and returns ready_samples.
  [[nodiscard]] virtual std::shared_ptr<pending_samples> sample_async(tensor_view logits,
                                                                      const sampling_batch& batch,
                                                                      std::int32_t* tokens_out) {
    std::vector<sample_result> results = sample(logits, batch);
    std::vector<std::int32_t> tokens;
    tokens.reserve(results.size());
    for (const sample_result& r : results) {
      // A row with nothing to draw feeds token 0, never an id outside the vocabulary: its
      // sequence ends with an error when the result reaches the host.
      tokens.push_back(r.token == no_allowed_token ? 0 : static_cast<std::int32_t>(r.token));
    }
    upload(tokens_out, tokens.data(), tokens.size() * sizeof(std::int32_t));
    return std::make_shared<ready_samples>(std::move(results));
  }
  // dst[dst_index[i]] = src[src_index[i]] for i < n; every array is int32 device memory. Feeds a
  // step the tokens the step before sampled without their coming to the host first.
  virtual void copy_tokens(const std::int32_t* src, const std::int32_t* src_index,
                           std::int32_t* dst, const std::int32_t* dst_index, std::int32_t n) = 0;
  // dst[0, n) = src[0, n), each device memory or allocate_host() memory, in stream order (a
  // hybrid's state snapshots, and their host tier).
  virtual void copy_device(void* dst, const void* src, std::size_t n) = 0;
  // Enqueues `spans` on the device's copy stream: they start once every op enqueued before this
  // call is done, and run beside the ops enqueued after it, which never wait for them (a KV tier's
  // blocks coming back while other requests compute). Until ready(), the caller lets nothing
  // read or write the destinations or write the sources. The default copies at once, in stream
  // order, and returns ready_copies.
  [[nodiscard]] virtual std::shared_ptr<pending_copies> copy_async(std::vector<copy_span> spans) {
    for (const copy_span& c : spans) copy_device(c.dst, c.src, c.n);
    return std::make_shared<ready_copies>();
  }
  // Host memory copy_device reaches (pinned on CUDA), for a tier behind the device's memory.
  [[nodiscard]] virtual std::shared_ptr<void> allocate_host(std::size_t size_bytes) {
    return std::shared_ptr<void>(::operator new(size_bytes), [](void* p) { ::operator delete(p); });
  }
  // Rough rates, for cost models (whether a spilled snapshot repays its copy): dense compute in
  // FLOP/s and copies to or from allocate_host() memory in bytes/s.
  virtual double compute_flops() const { return 1e10; }
  virtual double host_bytes_per_s() const { return 1e10; }
  // --- LoRA adapters (batched per token: each token its own adapter, or none) ---
  // out[t, c] += sum_j b[s * N + c, j] * u[t, p * rank + j] for every token t whose slot
  // s = slots[t] >= 0 (device memory [T], int32; -1: the base model, out[t] unchanged), c in
  // part p of the N = out.cols columns, where u[t, p * rank + j] = sum_k a[(s * parts + p) * rank
  // + j, k] * x[t, k] (u: tmp [T, parts * rank], f32, a workspace). Each sum is reduced in index
  // order in f32 (u kept in f32), per token: a token's result does not depend on the rest of the
  // batch.
  virtual void lora_apply(tensor_view x, const lora_weights& w, const std::int32_t* slots,
                          tensor_view tmp, tensor_view out) = 0;
  // --- Mamba-2 mixers (hybrid models; gpu/mamba.hpp, the math in gpu/sim/sim_mamba.hpp) ---
  // out[T, C] = silu(causal depthwise conv1d) of the columns [col_begin, col_begin + C) of `in`
  // (w [C, K], bias [C] or empty), each sequence continuing from its conv state
  // (states [rows, C, K - 1], f32: the K - 1 inputs before, oldest first), which then holds its
  // last K - 1 inputs.
  virtual void mamba_conv1d(tensor_view in, std::int64_t col_begin, tensor_view w,
                            tensor_view bias, float* states, const mamba_batch& batch,
                            tensor_view out) = 0;
  // The selective scan: y[T, heads * head_dim] from xbc [T, x | B | C] (the conv's output), dt
  // in the columns [dt_col, dt_col + heads) of `proj`, A_log, dt_bias and D [heads], each
  // sequence continuing from its SSM state (states [rows, heads, head_dim, state_size], f32).
  virtual void mamba_scan(tensor_view xbc, tensor_view proj, std::int64_t dt_col,
                          tensor_view A_log, tensor_view dt_bias, tensor_view D,
                          const mamba_shape& shape, float* states, const mamba_batch& batch,
                          tensor_view y) = 0;
  // out = w * RMSNorm per group of `group` columns of (y * silu(z)), z the first y.cols columns
  // of `gate` (transformers' Zamba2RMSNormGated).
  virtual void gated_rms_norm(tensor_view y, tensor_view gate, tensor_view w, std::int64_t group,
                              float eps, tensor_view out) = 0;
  // The same norm when one group's columns are on several ranks (tensor parallelism with fewer
  // Mamba-2 groups than ranks), in two halves around an all_reduce_sum of `sums` [T, S] (f32):
  // gated_square_sums writes, per row, the sum of squares of (y * silu(z)) over y's columns in
  // column `col` of `sums` and 0 in the others; gated_rms_norm_summed then writes
  // out = w * (y * silu(z)) / sqrt(sums[t, col] / count + eps), count the group's columns.
  virtual void gated_square_sums(tensor_view y, tensor_view gate, std::int64_t col,
                                 tensor_view sums) = 0;
  virtual void gated_rms_norm_summed(tensor_view y, tensor_view gate, tensor_view w,
                                     tensor_view sums, std::int64_t col, std::int64_t count,
                                     float eps, tensor_view out) = 0;
  // out = relu(x)^2 (NemotronH's MLP activation).
  virtual void relu2(tensor_view x, tensor_view out) = 0;
  // Rows that verified drafts (rows [n], device memory) keep the state after their last accepted
  // position: a = how many of a row's drafts stand (ids[first_draft + j] == sampled[first_sample
  // + j] for every j < a); when a < num_drafts, state row save_row + a (written by the mixers
  // through mamba_batch::save_row) is copied over the row's slot in every layer of conv and ssm.
  // sampled and ids are device memory; runs after the step's sampling.
  virtual void select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                                   const draft_states* rows, std::int32_t n, state_buffer conv,
                                   state_buffer ssm) = 0;
  // Counts sampled tokens into penalty lists kept on the device: for i < n, list l =
  // list_index[i] (the first lens[l] of the `stride` entries at lists + l * stride) takes token
  // t = tokens[src_index[i]] once more in the output: its entry's output_count grows by one, or
  // {t, 1, not in the prompt} is appended (a full list stays as it is). Lists are distinct within
  // a call; every array is device memory. Keeps a sequence's penalties current on the device
  // without its token coming to the host first.
  virtual void count_penalty_tokens(const std::int32_t* tokens, const std::int32_t* src_index,
                                    penalty_token* lists, std::int32_t* lens,
                                    const std::int32_t* list_index, std::int32_t stride,
                                    std::int32_t n) = 0;

 private:
  std::shared_ptr<collectives> group_;  // null: a group of one
};

inline device_buffer::~device_buffer() {
  if (owner_ && data_) owner_->release(data_);
}

// Makes the simulated GPU: f32 compute on `threads` CPU threads (0: all cores), with a memory
// budget of memory_mb (0: 4096); each copy_async batch takes at least copy_latency_us.
std::unique_ptr<device> make_sim_device(int threads, std::size_t memory_mb,
                                        std::int64_t copy_latency_us = 0);

}  // namespace courier::gpu
