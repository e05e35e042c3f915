#include "gpu/cuda/cuda_device.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_graph.hpp"
#include "gpu/cuda/cuda_stream.hpp"
#include "gpu/cuda/device_ops.hpp"
#include "gpu/cuda/gemm.hpp"
#include "gpu/cuda/host_staging.hpp"
#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/fill.hpp"
#include "gpu/cuda/kernels/lora.hpp"
#include "gpu/cuda/kernels/mamba.hpp"
#include "gpu/cuda/kernels/penalty_lists.hpp"

namespace courier::gpu::cuda {

namespace {

void require(const tensor_view& t, dtype want, const char* what) {
  if (t.type != want) {
    throw std::invalid_argument(fmt::format("cuda device: {} is {}, expected {}", what,
                                            dtype_name(t.type), dtype_name(want)));
  }
}

// A timing event recorded on the device's stream.
class cuda_timestamp final : public device_timestamp {
 public:
  explicit cuda_timestamp(cudaStream_t s) { e_.record(s); }
  const event& get() const { return e_; }

 private:
  event e_{true};
};

// A copy_async batch: done when the event recorded after its copies on the copy stream is.
class cuda_copies final : public pending_copies {
 public:
  cudaEvent_t get() const { return done_.get(); }
  bool ready() override { return done_.done(); }  // done, or failed (wait() says how)
  void wait() override { done_.synchronize(); }

 private:
  event done_;
};

#ifdef COURIER_CUDA_EMULATED
// The emulator's runtime counts the work queued on each device (gpu/cuda_emu, not CUDA's).
work_counts::tally tally_of(const courierEmuWorkTally& t) {
  auto n = [&](int k) { return static_cast<std::int64_t>(t.calls[k]); };
  auto b = [&](int k) { return static_cast<std::int64_t>(t.bytes[k]); };
  return {n(courierEmuKernel),   n(courierEmuHostFunction), n(courierEmuCopyHtoD),
          b(courierEmuCopyHtoD), n(courierEmuCopyDtoH),     b(courierEmuCopyDtoH),
          n(courierEmuCopyDtoD), b(courierEmuCopyDtoD),     n(courierEmuMemset)};
}

std::optional<work_counts> emulated_work_counts(int ordinal) {
  courierEmuWorkCounts c{};
  if (courierEmuGetWorkCounts(ordinal, &c) != 0) return std::nullopt;
  return work_counts{tally_of(c.eager), tally_of(c.in_graphs),
                     static_cast<std::int64_t>(c.graph_launches)};
}
#endif

class cuda_device final : public device {
 public:
  cuda_device(int ordinal, const cuda_options& options) : ordinal_(ordinal) {
    CUDA_CHECK(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    name_ = fmt::format("cuda ({}, sm_{}{}, {} GB)", prop.name, prop.major, prop.minor,
                        prop.totalGlobalMem >> 30);
    num_sms_ = prop.multiProcessorCount;
    std::size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    // What is free now, less what cuBLASLt, the CUDA context and the kernels' workspaces take.
    budget_ = free_bytes > (1u << 30) ? free_bytes - (1u << 30) : free_bytes / 2;
    stream_ = std::make_unique<stream>();
    copies_ = std::make_unique<stream>();
    uploads_ = std::make_unique<upload_ring>(4u << 20, 4);
    gemm::options gemm_options;
    gemm_options.autotune = options.gemm_autotune;
    gemm_ = std::make_unique<gemm>(gemm_options);
    ops_ = std::make_unique<device_ops>(ordinal, num_sms_, *uploads_);
  }
  ~cuda_device() override {
    ops_.reset();
    gemm_.reset();
    if (stream_) (void)cudaStreamSynchronize(stream_->get());  // no copy still reads the ring
    if (copies_) (void)cudaStreamSynchronize(copies_->get());
    uploads_.reset();
    copies_.reset();
    stream_.reset();
  }

  std::string name() const override { return name_; }
  void bind_thread() override { CUDA_CHECK(cudaSetDevice(ordinal_)); }
#ifdef COURIER_CUDA_EMULATED
  std::optional<work_counts> counted_work() const override {
    return emulated_work_counts(ordinal_);
  }
#endif
  cuda_placement placement() const { return {ordinal_, stream_->get()}; }
  dtype compute_dtype() const override { return dtype::bf16; }
  dtype weight_dtype() const override { return dtype::bf16; }
  std::size_t memory_budget_bytes() const override { return budget_; }

  device_buffer allocate(std::size_t size_bytes) override {
    void* p = nullptr;
    if (size_bytes > 0) CUDA_CHECK(cudaMalloc(&p, size_bytes));
    return device_buffer(this, p, size_bytes);
  }
  void release(void* data) noexcept override { cudaFree(data); }
  void upload(void* dst, const void* src, std::size_t n) override {
    uploads_->upload(dst, src, n, s());
  }
  void download(void* dst, const void* src, std::size_t n) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s()));
    stream_->synchronize();
  }
  void fill_zero(void* dst, std::size_t n) override { CUDA_CHECK(cudaMemsetAsync(dst, 0, n, s())); }
  void synchronize() override { stream_->synchronize(); }
  std::unique_ptr<device_timestamp> timestamp() override {
    return std::make_unique<cuda_timestamp>(s());
  }
  double elapsed_ms(const device_timestamp& a, const device_timestamp& b) override {
    const auto& y = dynamic_cast<const cuda_timestamp&>(b);
    y.get().synchronize();
    return y.get().elapsed_ms_since(dynamic_cast<const cuda_timestamp&>(a).get());
  }
  std::unique_ptr<device_graph> capture(const std::function<void()>& body) override {
    return capture_graph(s(), body);
  }

  device_buffer load_weight(const host_tensor& t) override {
    const auto n = static_cast<std::size_t>(t.numel());
    device_buffer buf = allocate(n * 2);
    if (t.type == dtype::bf16) {
      upload(buf.data(), t.data, n * 2);
    } else {
      std::vector<std::uint16_t> h(n);
      const auto* bytes = static_cast<const unsigned char*>(t.data);  // at any byte (u16_at)
      switch (t.type) {
        case dtype::f32:
          for (std::size_t i = 0; i < n; ++i) {
            float f;
            std::memcpy(&f, bytes + 4 * i, sizeof f);
            h[i] = f32_to_bf16(f);
          }
          break;
        case dtype::f16:
          for (std::size_t i = 0; i < n; ++i) h[i] = f32_to_bf16(f16_to_f32(u16_at(t.data, i)));
          break;
        default:
          throw std::invalid_argument("cuda device: an I32 tensor is not a weight");
      }
      upload(buf.data(), h.data(), n * 2);
      stream_->synchronize();  // h goes out of scope
    }
    return buf;
  }

  void fill_random(tensor_view out, std::uint64_t seed, float center, float scale) override {
    require(out, dtype::bf16, "fill_random output");
    CUDA_CHECK(launch_fill_random(out.data, out.numel(), seed, center, scale, s()));
  }
  std::size_t reserve_workspace(const workspace_limits& limits) override {
    return ops_->reserve(limits);
  }

  void embedding(const std::int32_t* ids, tensor_view table, std::int64_t first_id,
                 tensor_view out) override {
    require(table, dtype::bf16, "embedding table");
    CUDA_CHECK(launch_embedding(ids, out.rows, table.data, first_id, table.rows, table.cols,
                                out.data, s()));
  }
  void rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) override {
    require(x, dtype::bf16, "rms_norm input");
    CUDA_CHECK(launch_rms_norm(x.data, w.data, eps, out.data, x.rows, x.cols, s()));
  }
  void add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                    tensor_view out) override {
    require(residual, dtype::bf16, "residual");
    CUDA_CHECK(
        launch_add_rms_norm(residual.data, x.data, w.data, eps, out.data, x.rows, x.cols, s()));
  }
  void linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) override {
    require(x, dtype::bf16, "linear input");
    require(w, dtype::bf16, "linear weight");
    require(out, out.type == dtype::f32 ? dtype::f32 : dtype::bf16, "linear output");
    if (bias.data) require(bias, out.type, "linear bias (cuBLASLt's epilogue: the output's type)");
    if (x.rows == 0) return;
    gemm_->run(x.data, w.data, bias.data, out.data, out.type == dtype::f32, x.rows, w.rows, x.cols,
               s());
  }
  void qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,
                         std::int32_t head_dim, tensor_view q_norm, tensor_view k_norm, float eps,
                         const std::int32_t* positions, const float* inv_freq,
                         const std::int32_t* slot_mapping, kv_cache_view cache,
                         tensor_view q_out) override {
    require(qkv, dtype::bf16, "qkv");
    require(q_out, dtype::bf16, "q_out");
    const std::int64_t width =
        (static_cast<std::int64_t>(num_q_heads) + 2 * num_kv_heads) * head_dim;
    if (qkv.cols != width || q_out.rows != qkv.rows ||
        q_out.cols != static_cast<std::int64_t>(num_q_heads) * head_dim) {
      throw std::invalid_argument(fmt::format(
          "cuda device: qkv_rope_kv_write: qkv [{}, {}] and q_out [{}, {}] do not fit {} query "
          "and {} kv heads of {}",
          qkv.rows, qkv.cols, q_out.rows, q_out.cols, num_q_heads, num_kv_heads, head_dim));
    }
    CUDA_CHECK(launch_qkv_rope_kv_write(qkv.data, qkv.rows, num_q_heads, num_kv_heads, head_dim,
                                        q_norm.data, k_norm.data, eps, positions, inv_freq,
                                        slot_mapping, cache, q_out.data, s()));
  }
  void plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                      std::int32_t num_kv_heads, std::int32_t head_dim) override {
    ops_->plan_attention(batch, num_q_heads, num_kv_heads, head_dim, s());
  }
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out) override {
    ops_->attention(q, cache, batch, scale, out, s());
  }
  void silu_mul(tensor_view gate_up, tensor_view out) override {
    if (gate_up.cols != 2 * out.cols || gate_up.rows != out.rows) {
      throw std::invalid_argument(
          "cuda device: silu_mul: gate_up must be [T, 2 * I] for out [T, I]");
    }
    CUDA_CHECK(launch_silu_mul(gate_up.data, out.data, out.rows, out.cols, s()));
  }
  void gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) override {
    CUDA_CHECK(launch_gather_rows(x.data, x.rows, x.cols, dtype_size(x.type), rows, out.rows,
                                  out.data, s()));
  }
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) override {
    require(logits, dtype::f32, "logits");
    return sample_async(logits, batch, nullptr)->take();
  }
  std::shared_ptr<pending_samples> sample_async(tensor_view logits, const sampling_batch& batch,
                                                std::int32_t* tokens_out) override {
    require(logits, dtype::f32, "logits");
    return ops_->sample_async(logits, batch, tokens_out, s());
  }
  void copy_tokens(const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,
                   const std::int32_t* dst_index, std::int32_t n) override {
    CUDA_CHECK(launch_copy_tokens(src, src_index, dst, dst_index, n, s()));
  }
  // The Mamba-2 kernels (kernels/mamba.hpp) have not run on a GPU yet: runs_mamba() stays false
  // (llama_model refuses hybrids on this backend) until their [gpu] tests pass on one; the ops
  // run for those tests. On the CUDA emulator (tests only) hybrids load, so that the integration
  // tests hold these kernels, through the whole server, to the sim's outputs.
#ifdef COURIER_CUDA_EMULATED
  bool runs_mamba() const override { return true; }
#endif
  void mamba_conv1d(tensor_view in, std::int64_t col_begin, tensor_view w, tensor_view bias,
                    float* states, const mamba_batch& batch, tensor_view out) override {
    require(in, dtype::bf16, "mamba_conv1d input");
    require(out, dtype::bf16, "mamba_conv1d output");
    require(w, dtype::bf16, "mamba_conv1d weight");
    if (w.rows != out.cols || in.rows != batch.num_tokens || out.rows != batch.num_tokens ||
        (bias.data && (bias.type != dtype::bf16 || bias.numel() != out.cols))) {
      throw std::invalid_argument("cuda device: mamba_conv1d shapes do not agree");
    }
    CUDA_CHECK(launch_mamba_conv1d(in.data, in.cols, col_begin, out.cols,
                                   static_cast<std::int32_t>(w.cols), w.data, bias.data, states,
                                   batch, out.data, s()));
  }
  void mamba_scan(tensor_view xbc, tensor_view proj, std::int64_t dt_col, tensor_view A_log,
                  tensor_view dt_bias, tensor_view D, const mamba_shape& shape, float* states,
                  const mamba_batch& batch, tensor_view y) override {
    for (const tensor_view* t : {&xbc, &proj, &A_log, &dt_bias, &D, &y}) {
      require(*t, dtype::bf16, "mamba_scan tensor");
    }
    if (y.cols != static_cast<std::int64_t>(shape.num_heads) * shape.head_dim ||
        xbc.rows != batch.num_tokens || proj.rows != batch.num_tokens ||
        y.rows != batch.num_tokens || A_log.numel() != shape.num_heads ||
        dt_bias.numel() != shape.num_heads || D.numel() != shape.num_heads) {
      throw std::invalid_argument("cuda device: mamba_scan shapes do not agree");
    }
    CUDA_CHECK(launch_mamba_scan(xbc.data, xbc.cols, proj.data, proj.cols, dt_col, A_log.data,
                                 dt_bias.data, D.data, shape, states, batch, y.data, s()));
  }
  void select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                           const draft_states* rows, std::int32_t n, state_buffer conv,
                           state_buffer ssm) override {
    CUDA_CHECK(launch_select_draft_states(sampled, ids, rows, n, conv, ssm, s()));
  }
  void gated_rms_norm(tensor_view y, tensor_view gate, tensor_view w, std::int64_t group,
                      float eps, tensor_view out) override {
    require(y, dtype::bf16, "gated_rms_norm input");
    require(gate, dtype::bf16, "gated_rms_norm gate");
    require(w, dtype::bf16, "gated_rms_norm weight");
    require(out, dtype::bf16, "gated_rms_norm output");
    if (gate.rows != y.rows || w.numel() != y.cols || out.rows != y.rows || out.cols != y.cols) {
      throw std::invalid_argument("cuda device: gated_rms_norm shapes do not agree");
    }
    CUDA_CHECK(launch_gated_rms_norm(y.data, gate.data, gate.cols, w.data, y.rows, y.cols, group,
                                     eps, out.data, s()));
  }
  void gated_square_sums(tensor_view y, tensor_view gate, std::int64_t col,
                         tensor_view sums) override {
    require(y, dtype::bf16, "gated_square_sums input");
    require(gate, dtype::bf16, "gated_square_sums gate");
    require(sums, dtype::f32, "gated_square_sums sums");
    if (gate.rows != y.rows || sums.rows != y.rows) {
      throw std::invalid_argument("cuda device: gated_square_sums shapes do not agree");
    }
    CUDA_CHECK(launch_gated_square_sums(y.data, gate.data, gate.cols, y.rows, y.cols,
                                        static_cast<float*>(sums.data), sums.cols, col, s()));
  }
  void gated_rms_norm_summed(tensor_view y, tensor_view gate, tensor_view w, tensor_view sums,
                             std::int64_t col, std::int64_t count, float eps,
                             tensor_view out) override {
    require(y, dtype::bf16, "gated_rms_norm_summed input");
    require(gate, dtype::bf16, "gated_rms_norm_summed gate");
    require(w, dtype::bf16, "gated_rms_norm_summed weight");
    require(sums, dtype::f32, "gated_rms_norm_summed sums");
    require(out, dtype::bf16, "gated_rms_norm_summed output");
    if (gate.rows != y.rows || w.numel() != y.cols || sums.rows != y.rows ||
        out.rows != y.rows || out.cols != y.cols) {
      throw std::invalid_argument("cuda device: gated_rms_norm_summed shapes do not agree");
    }
    CUDA_CHECK(launch_gated_rms_norm_summed(y.data, gate.data, gate.cols, w.data, y.rows, y.cols,
                                            static_cast<const float*>(sums.data), sums.cols, col,
                                            count, eps, out.data, s()));
  }
  void copy_device(void* dst, const void* src, std::size_t n) override {
    // cudaMemcpyDefault: either side may be pinned host memory (allocate_host; unified
    // addressing tells which).
    if (n > 0) CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s()));
  }
  // The copy stream waits for an event recorded on the compute stream now, then copies; the
  // compute stream never waits for it.
  std::shared_ptr<pending_copies> copy_async(std::vector<copy_span> spans) override {
    auto done = std::make_shared<cuda_copies>();
    const event before;  // released once the device has passed it
    before.record(s());
    CUDA_CHECK(cudaStreamWaitEvent(copies_->get(), before.get(), 0));
    for (const copy_span& c : spans) {
      if (c.n == 0) continue;
      CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.n, cudaMemcpyDefault, copies_->get()));
    }
    CUDA_CHECK(cudaEventRecord(done->get(), copies_->get()));
    return done;
  }
  std::shared_ptr<void> allocate_host(std::size_t size_bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, std::max<std::size_t>(size_bytes, 1), cudaHostAllocDefault));
    return std::shared_ptr<void>(p, [](void* q) { cudaFreeHost(q); });
  }
  // Conservative for Hopper: dense bf16 well below peak; host copies over PCIe 5 pinned.
  double compute_flops() const override { return 4e14; }
  double host_bytes_per_s() const override { return 2e10; }
  void relu2(tensor_view x, tensor_view out) override {
    require(x, dtype::bf16, "relu2 input");
    require(out, dtype::bf16, "relu2 output");
    if (x.numel() != out.numel()) {
      throw std::invalid_argument("cuda device: relu2 shapes do not agree");
    }
    CUDA_CHECK(launch_relu2(x.data, out.data, x.numel(), s()));
  }
  // The shapes as the sim checks them (gpu/sim/sim_lora.cpp). The slots are device memory and
  // not read here: a token whose slot is not below w.slots is skipped by the kernels like one of
  // slot -1 (out[t] unchanged), where the sim throws.
  void lora_apply(tensor_view x, const lora_weights& w, const std::int32_t* slots, tensor_view tmp,
                  tensor_view out) override {
    require(x, dtype::bf16, "lora_apply input");
    require(out, dtype::bf16, "lora_apply output");
    require(w.a, dtype::bf16, "lora_apply A");
    require(w.b, dtype::bf16, "lora_apply B");
    require(tmp, dtype::f32, "lora_apply workspace");
    const std::int64_t T = x.rows, K = x.cols, N = out.cols, R = w.rank, P = w.parts;
    if (P < 1 || P > 3 || R < 1 || w.slots < 1 || out.rows != T || tmp.rows < T ||
        tmp.cols < P * R || w.a.rows != w.slots * P * R || w.a.cols != K ||
        w.b.rows != w.slots * N || w.b.cols != R || w.part_end[P - 1] != N) {
      throw std::invalid_argument("cuda device: lora_apply shapes do not agree");
    }
    CUDA_CHECK(launch_lora_shrink(x.data, T, K, w.a.data, slots, w.slots, w.parts, w.rank,
                                  tmp.as<float>(), tmp.cols, s()));
    CUDA_CHECK(launch_lora_expand(tmp.as<float>(), tmp.cols, T, w.b.data, slots, w.slots, w.parts,
                                  w.rank, w.part_end, N, out.data, s()));
  }
  void count_penalty_tokens(const std::int32_t* tokens, const std::int32_t* src_index,
                            penalty_token* lists, std::int32_t* lens,
                            const std::int32_t* list_index, std::int32_t stride,
                            std::int32_t n) override {
    CUDA_CHECK(launch_count_penalty_tokens(tokens, src_index, lists, lens, list_index, stride, n,
                                           s()));
  }

 private:
  cudaStream_t s() const { return stream_->get(); }

  int ordinal_ = 0;
  int num_sms_ = 0;
  std::string name_;
  std::size_t budget_ = 0;
  std::unique_ptr<stream> stream_;   // Owned: every op runs on it...
  std::unique_ptr<stream> copies_;   // Owned: ...but copy_async's copies.
  std::unique_ptr<upload_ring> uploads_;  // Owned: what upload() copies from.
  std::unique_ptr<gemm> gemm_;       // Owned.
  std::unique_ptr<device_ops> ops_;  // Owned: attention and sampling with their workspaces.
};

}  // namespace

std::unique_ptr<device> make_cuda_device(int ordinal, const cuda_options& options) {
  if (!has_device()) throw std::runtime_error("cuda device: no CUDA GPU is visible");
  return std::make_unique<cuda_device>(ordinal, options);
}

cuda_placement placement_of(const device& dev) {
  const auto* c = dynamic_cast<const cuda_device*>(&dev);
  return c ? c->placement() : cuda_placement{};
}

int visible_gpus() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

}  // namespace courier::gpu::cuda
