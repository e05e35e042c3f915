#include "gpu/sim/sim_device.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/random_fill.hpp"
#include "gpu/recording_device.hpp"
#include "gpu/sim/sim_kernels.hpp"
#include "gpu/sim/sim_mamba.hpp"
#include "gpu/sim/sim_sampling.hpp"

namespace courier::gpu {

std::unique_ptr<device> make_sim_device(int threads, std::size_t memory_mb,
                                        std::int64_t copy_latency_us) {
  // Recorded ops stand in for graphs, so the model's graph steps run on the sim too.
  return std::make_unique<recording_device>(std::make_unique<sim::sim_device>(
      threads, memory_mb, std::chrono::microseconds(std::max<std::int64_t>(0, copy_latency_us))));
}

}  // namespace courier::gpu

namespace courier::gpu::sim {

namespace {

void require_f32(const tensor_view& t, const char* what) {
  if (t.type != dtype::f32) {
    throw std::invalid_argument(std::string("sim device: ") + what + " must be f32, got " +
                                dtype_name(t.type));
  }
}

}  // namespace

sim_device::sim_device(int threads, std::size_t memory_mb, std::chrono::microseconds copy_latency)
    : pool_(threads),
      budget_bytes_((memory_mb ? memory_mb : 4096) * std::size_t{1} << 20),
      copies_(copy_latency) {}

std::string sim_device::name() const {
  return "sim (" + std::to_string(pool_.size()) + " threads)";
}

device_buffer sim_device::allocate(std::size_t size_bytes) {
  // Large buffers (KV pages, big weights) come from mmap: page-aligned and zeroed lazily, so a
  // KV cache sized for the whole budget costs only the pages that are touched. Small ones are
  // 64-byte aligned heap memory, zeroed.
  const std::size_t n = std::max<std::size_t>(64, (size_bytes + 63) / 64 * 64);
  void* p = nullptr;
  if (n >= mmap_threshold) {
    p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    std::lock_guard<std::mutex> lock(mapped_mu_);
    mapped_[p] = n;
  } else {
    p = std::aligned_alloc(64, n);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, n);
  }
  return device_buffer(this, p, size_bytes);
}

void sim_device::release(void* data) noexcept {
  {
    std::lock_guard<std::mutex> lock(mapped_mu_);
    auto it = mapped_.find(data);
    if (it != mapped_.end()) {
      ::munmap(data, it->second);
      mapped_.erase(it);
      return;
    }
  }
  std::free(data);
}

// Zero bytes copy nothing (an empty vector's data() may be null, which memcpy may not get).
void sim_device::upload(void* dst, const void* src, std::size_t size_bytes) {
  if (size_bytes > 0) std::memcpy(dst, src, size_bytes);
}

void sim_device::download(void* dst, const void* src, std::size_t size_bytes) {
  if (size_bytes > 0) std::memcpy(dst, src, size_bytes);
}

void sim_device::fill_zero(void* dst, std::size_t size_bytes) { std::memset(dst, 0, size_bytes); }

device_buffer sim_device::load_weight(const host_tensor& t) {
  const std::int64_t n = t.numel();
  device_buffer buf = allocate(static_cast<std::size_t>(n) * sizeof(float));
  float* out = static_cast<float*>(buf.data());
  switch (t.type) {
    case dtype::f32:
      std::memcpy(out, t.data, static_cast<std::size_t>(n) * sizeof(float));
      break;
    case dtype::bf16:  // the data may start at any byte (u16_at)
      for (std::int64_t i = 0; i < n; ++i) {
        out[i] = bf16_to_f32(u16_at(t.data, static_cast<std::size_t>(i)));
      }
      break;
    case dtype::f16:
      for (std::int64_t i = 0; i < n; ++i) {
        out[i] = f16_to_f32(u16_at(t.data, static_cast<std::size_t>(i)));
      }
      break;
    case dtype::i32:
      throw std::invalid_argument("sim device: an I32 tensor is not a weight");
  }
  return buf;
}

void sim_device::fill_random(tensor_view out, std::uint64_t seed, float center, float scale) {
  require_f32(out, "fill_random output");
  auto* p = static_cast<float*>(out.data);
  const std::int64_t n = out.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    p[i] = random_fill_value(seed, static_cast<std::uint64_t>(i), center, scale);
  }
}

void sim_device::embedding(const std::int32_t* ids, tensor_view table, std::int64_t first_id,
                           tensor_view out) {
  require_f32(table, "embedding table");
  const std::int64_t h = table.cols;
  for (std::int64_t t = 0; t < out.rows; ++t) {
    const std::int32_t id = ids[t];
    if (id < 0) {  // the model checks ids against the vocabulary on the host
      throw std::out_of_range("sim device: token id " + std::to_string(id));
    }
    float* row = out.as<float>() + t * h;
    const std::int64_t local = id - first_id;
    if (local < 0 || local >= table.rows) {  // another rank's: it adds the row
      std::fill(row, row + h, 0.0f);
      continue;
    }
    std::memcpy(row, table.as<float>() + local * h, h * sizeof(float));
  }
}

void sim_device::rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) {
  const std::int64_t h = x.cols;
  pool_.parallel_for(x.rows, 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t)
      rms_norm_row(x.as<float>() + t * h, w.as<float>(), eps, out.as<float>() + t * h, h);
  });
}

void sim_device::add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                              tensor_view out) {
  const std::int64_t h = x.cols;
  pool_.parallel_for(x.rows, 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      float* r = residual.as<float>() + t * h;
      const float* xi = x.as<float>() + t * h;
      for (std::int64_t i = 0; i < h; ++i) r[i] += xi[i];
      rms_norm_row(r, w.as<float>(), eps, out.as<float>() + t * h, h);
    }
  });
}

void sim_device::linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) {
  require_f32(x, "linear input");
  require_f32(w, "linear weight");
  if (x.cols != w.cols || out.cols != w.rows || out.rows != x.rows) {
    throw std::invalid_argument("sim device: linear shapes do not agree");
  }
  const std::int64_t M = x.rows, K = x.cols, N = w.rows;
  const float* b = bias.data ? bias.as<float>() : nullptr;
  // Split over output columns in blocks of 4 so every task streams its own weight rows once.
  const std::int64_t blocks = (N + 3) / 4;
  const std::int64_t grain = std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, M * K));
  pool_.parallel_for(blocks, grain, [&](std::int64_t bb, std::int64_t be) {
    gemm_rows(x.as<float>(), w.as<float>(), b, out.as<float>(), M, K, N, bb * 4,
              std::min(N, be * 4));
  });
}

void sim_device::qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads,
                                   std::int32_t num_kv_heads, std::int32_t head_dim,
                                   tensor_view q_norm, tensor_view k_norm, float eps,
                                   const std::int32_t* positions, const float* inv_freq,
                                   const std::int32_t* slot_mapping, kv_cache_view cache,
                                   tensor_view q_out) {
  require_f32(qkv, "qkv");
  require_f32(q_out, "q_out");
  const std::int64_t hd = head_dim, nq = num_q_heads, nk = num_kv_heads;
  if (hd <= 0 || hd % 2 != 0 || nq < 0 || nk < 0 || qkv.cols != (nq + 2 * nk) * hd ||
      q_out.cols != nq * hd || q_out.rows != qkv.rows || cache.num_kv_heads != num_kv_heads ||
      cache.head_dim != head_dim) {
    throw std::invalid_argument("sim device: qkv_rope_kv_write shapes do not agree");
  }
  if (nk > 0 && cache.type != dtype::f32) {
    throw std::invalid_argument("sim device: the KV cache must be f32");
  }
  const std::int64_t half = hd / 2, width = nk * hd;
  const std::int64_t slots = static_cast<std::int64_t>(cache.num_blocks) * cache.block_size;
  const float* qw = q_norm.data ? q_norm.as<float>() : nullptr;
  const float* kw = k_norm.data ? k_norm.as<float>() : nullptr;
  pool_.parallel_for(qkv.rows, 8, [&](std::int64_t b, std::int64_t e) {
    std::vector<float> cs(static_cast<std::size_t>(hd));
    for (std::int64_t t = b; t < e; ++t) {
      const float pos = static_cast<float>(positions[t]);
      for (std::int64_t i = 0; i < half; ++i) {
        const float angle = pos * inv_freq[i];  // f32 product, as HF computes it
        cs[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
        cs[half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
      }
      // A head copied to dst, normalised there (when w), then rotated in place (rotate_half).
      auto head = [&](const float* src, const float* w, float* dst) {
        std::memcpy(dst, src, static_cast<std::size_t>(hd) * sizeof(float));
        if (w) rms_norm_row(dst, w, eps, dst, hd);
        for (std::int64_t i = 0; i < half; ++i) {
          const float x1 = dst[i], x2 = dst[half + i];
          dst[i] = x1 * cs[i] - x2 * cs[half + i];
          dst[half + i] = x2 * cs[i] + x1 * cs[half + i];
        }
      };
      const float* row = qkv.as<float>() + t * qkv.cols;
      float* q = q_out.as<float>() + t * q_out.cols;
      for (std::int64_t h = 0; h < nq; ++h) head(row + h * hd, qw, q + h * hd);
      const std::int64_t slot = slot_mapping[t];
      if (slot < 0 || slot >= slots) continue;  // a padding token: no K or V
      float* k = static_cast<float*>(cache.k) + slot * width;
      for (std::int64_t h = 0; h < nk; ++h) head(row + (nq + h) * hd, kw, k + h * hd);
      std::memcpy(static_cast<float*>(cache.v) + slot * width, row + (nq + nk) * hd,
                  static_cast<std::size_t>(width) * sizeof(float));
    }
  });
}

void sim_device::plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                                std::int32_t num_kv_heads, std::int32_t head_dim) {
  if (num_kv_heads <= 0 || head_dim <= 0 || num_q_heads % num_kv_heads != 0) {
    throw std::invalid_argument(fmt::format(
        "sim device: plan_attention: {} query heads over {} kv heads of {} do not group",
        num_q_heads, num_kv_heads, head_dim));
  }
  planned_ = planned_attention::of(batch, num_q_heads, num_kv_heads, head_dim);
}

void sim_device::attention(tensor_view q, kv_cache_view cache, const attention_batch& batch,
                           float scale, tensor_view out) {
  if (const char* why = planned_.mismatch(batch, q.cols, cache)) {
    throw std::logic_error(fmt::format("sim device: attention: {}", why));
  }
  const std::int64_t hd = cache.head_dim;
  const std::int64_t nq = q.cols / hd;
  const std::int64_t nkv = cache.num_kv_heads;
  const std::int64_t group = nq / nkv;
  const std::int64_t width = nkv * hd;
  const auto* kc = static_cast<const float*>(cache.k);
  const auto* vc = static_cast<const float*>(cache.v);
  pool_.parallel_for(q.rows * nq, 4, [&](std::int64_t b, std::int64_t e) {
    std::vector<float> scores;
    std::vector<float> acc(static_cast<std::size_t>(hd));
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t t = i / nq, h = i % nq, kvh = h / group;
      const std::int64_t seq = batch.token_seq[t];
      const std::int64_t len = static_cast<std::int64_t>(batch.positions[t]) + 1;
      const std::int32_t* table = batch.block_tables + seq * batch.max_blocks_per_seq;
      const float* qp = q.as<float>() + t * q.cols + h * hd;
      scores.resize(static_cast<std::size_t>(len));
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t slot =
            static_cast<std::int64_t>(table[j / batch.block_size]) * batch.block_size +
            j % batch.block_size;
        scores[j] = dot(qp, kc + slot * width + kvh * hd, hd) * scale;
        mx = std::max(mx, scores[j]);
      }
      float sum = 0.0f;
      for (std::int64_t j = 0; j < len; ++j) {
        scores[j] = std::exp(scores[j] - mx);
        sum += scores[j];
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t slot =
            static_cast<std::int64_t>(table[j / batch.block_size]) * batch.block_size +
            j % batch.block_size;
        const float p = scores[j] / sum;
        const float* vp = vc + slot * width + kvh * hd;
        for (std::int64_t d = 0; d < hd; ++d) acc[d] += p * vp[d];
      }
      std::copy(acc.begin(), acc.end(), out.as<float>() + t * out.cols + h * hd);
    }
  });
}

void sim_device::silu_mul(tensor_view gate_up, tensor_view out) {
  require_f32(gate_up, "silu_mul input");
  if (gate_up.cols != 2 * out.cols || gate_up.rows != out.rows) {
    throw std::invalid_argument("sim device: silu_mul shapes do not agree");
  }
  const std::int64_t inter = out.cols, n = out.numel();
  pool_.parallel_for(n, 1 << 14, [&](std::int64_t b, std::int64_t e) {
    const float* gu = gate_up.as<float>();
    float* o = out.as<float>();
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t t = i / inter, c = i % inter;
      const float g = gu[t * 2 * inter + c], u = gu[t * 2 * inter + inter + c];
      o[i] = g / (1.0f + std::exp(-g)) * u;
    }
  });
}

void sim_device::gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) {
  for (std::int64_t i = 0; i < out.rows; ++i) {
    std::memcpy(out.as<float>() + i * out.cols, x.as<float>() + rows[i] * x.cols,
                x.cols * sizeof(float));
  }
}

void sim_device::copy_tokens(const std::int32_t* src, const std::int32_t* src_index,
                             std::int32_t* dst, const std::int32_t* dst_index, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) dst[dst_index[i]] = src[src_index[i]];
}

void sim_device::mamba_conv1d(tensor_view in, std::int64_t col_begin, tensor_view w,
                              tensor_view bias, float* states, const mamba_batch& batch,
                              tensor_view out) {
  require_f32(in, "mamba_conv1d input");
  require_f32(w, "mamba_conv1d weight");
  const std::int64_t C = out.cols;
  if (w.rows != C || w.cols < 2 || col_begin < 0 || col_begin + C > in.cols ||
      in.rows != batch.num_tokens || out.rows != batch.num_tokens ||
      (bias.data && bias.numel() != C)) {
    throw std::invalid_argument("sim device: mamba_conv1d shapes do not agree");
  }
  const std::vector<sim::mamba_span> spans = sim::mamba_spans(batch);
  const auto K = static_cast<std::int32_t>(w.cols);
  pool_.parallel_for(C, 16, [&](std::int64_t b, std::int64_t e) {
    sim::mamba_conv1d(in.as<float>() + col_begin, in.cols, C, K, w.as<float>(),
                      bias.data ? bias.as<float>() : nullptr, states, spans, out.as<float>(), b,
                      e);
  });
}

void sim_device::mamba_scan(tensor_view xbc, tensor_view proj, std::int64_t dt_col,
                            tensor_view A_log, tensor_view dt_bias, tensor_view D,
                            const mamba_shape& shape, float* states, const mamba_batch& batch,
                            tensor_view y) {
  require_f32(xbc, "mamba_scan input");
  const std::int64_t inter = std::int64_t{shape.num_heads} * shape.head_dim;
  if (shape.n_groups < 1 || shape.num_heads % shape.n_groups != 0 ||
      xbc.cols != inter + 2 * std::int64_t{shape.n_groups} * shape.state_size ||
      y.cols != inter || dt_col < 0 || dt_col + shape.num_heads > proj.cols ||
      xbc.rows != batch.num_tokens || proj.rows != batch.num_tokens ||
      y.rows != batch.num_tokens || A_log.numel() != shape.num_heads ||
      dt_bias.numel() != shape.num_heads || D.numel() != shape.num_heads) {
    throw std::invalid_argument("sim device: mamba_scan shapes do not agree");
  }
  const std::vector<sim::mamba_span> spans = sim::mamba_spans(batch);
  pool_.parallel_for(shape.num_heads, 1, [&](std::int64_t b, std::int64_t e) {
    sim::mamba_scan(xbc.as<float>(), xbc.cols, proj.as<float>() + dt_col, proj.cols,
                    A_log.as<float>(), dt_bias.as<float>(), D.as<float>(), shape, states, spans,
                    y.as<float>(), static_cast<std::int32_t>(b), static_cast<std::int32_t>(e));
  });
}

void sim_device::gated_rms_norm(tensor_view y, tensor_view gate, tensor_view w,
                                std::int64_t group, float eps, tensor_view out) {
  require_f32(y, "gated_rms_norm input");
  if (group < 1 || y.cols % group != 0 || gate.rows != y.rows || gate.cols < y.cols ||
      w.numel() != y.cols || out.rows != y.rows || out.cols != y.cols) {
    throw std::invalid_argument("sim device: gated_rms_norm shapes do not agree");
  }
  pool_.parallel_for(y.rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      sim::gated_rms_norm_row(y.as<float>() + t * y.cols, gate.as<float>() + t * gate.cols,
                              w.as<float>(), y.cols, group, eps, out.as<float>() + t * out.cols);
    }
  });
}

void sim_device::gated_square_sums(tensor_view y, tensor_view gate, std::int64_t col,
                                   tensor_view sums) {
  require_f32(y, "gated_square_sums input");
  require_f32(sums, "gated_square_sums sums");
  if (gate.rows != y.rows || gate.cols < y.cols || sums.rows != y.rows || col < 0 ||
      col >= sums.cols) {
    throw std::invalid_argument("sim device: gated_square_sums shapes do not agree");
  }
  pool_.parallel_for(y.rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      float* row = sums.as<float>() + t * sums.cols;
      std::fill(row, row + sums.cols, 0.0f);
      row[col] = sim::gated_square_sum_row(y.as<float>() + t * y.cols,
                                           gate.as<float>() + t * gate.cols, y.cols);
    }
  });
}

void sim_device::gated_rms_norm_summed(tensor_view y, tensor_view gate, tensor_view w,
                                       tensor_view sums, std::int64_t col, std::int64_t count,
                                       float eps, tensor_view out) {
  require_f32(y, "gated_rms_norm_summed input");
  require_f32(sums, "gated_rms_norm_summed sums");
  if (gate.rows != y.rows || gate.cols < y.cols || w.numel() != y.cols || sums.rows != y.rows ||
      col < 0 || col >= sums.cols || count < 1 || out.rows != y.rows || out.cols != y.cols) {
    throw std::invalid_argument("sim device: gated_rms_norm_summed shapes do not agree");
  }
  pool_.parallel_for(y.rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      const float var = sums.as<float>()[t * sums.cols + col] / static_cast<float>(count);
      sim::gated_scale_row(y.as<float>() + t * y.cols, gate.as<float>() + t * gate.cols,
                           w.as<float>(), y.cols, 1.0f / std::sqrt(var + eps),
                           out.as<float>() + t * out.cols);
    }
  });
}

void sim_device::relu2(tensor_view x, tensor_view out) {
  require_f32(x, "relu2 input");
  if (x.rows != out.rows || x.cols != out.cols) {
    throw std::invalid_argument("sim device: relu2 shapes do not agree");
  }
  pool_.parallel_for(x.numel(), 1 << 14, [&](std::int64_t b, std::int64_t e) {
    const float* in = x.as<float>();
    float* o = out.as<float>();
    for (std::int64_t i = b; i < e; ++i) {
      const float r = in[i] > 0.0f ? in[i] : 0.0f;
      o[i] = r * r;
    }
  });
}

void sim_device::copy_device(void* dst, const void* src, std::size_t n) {
  if (n > 0) std::memmove(dst, src, n);
}

std::shared_ptr<pending_copies> sim_device::copy_async(std::vector<copy_span> spans) {
  return copies_.enqueue(std::move(spans));
}

void sim_device::select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                                     const draft_states* rows, std::int32_t n,
                                     state_buffer conv, state_buffer ssm) {
  if (n < 0) throw std::invalid_argument("sim select_draft_states: n < 0");
  sim::select_draft_states(sampled, ids, rows, n, {conv, ssm});
}

void sim_device::count_penalty_tokens(const std::int32_t* tokens, const std::int32_t* src_index,
                                      penalty_token* lists, std::int32_t* lens,
                                      const std::int32_t* list_index, std::int32_t stride,
                                      std::int32_t n) {
  if (n < 0 || (n > 0 && stride < 1)) {
    throw std::invalid_argument("sim count_penalty_tokens: n < 0 or stride < 1");
  }
  for (std::int32_t i = 0; i < n; ++i) {
    const std::int32_t l = list_index[i];
    const auto token = static_cast<std::uint32_t>(tokens[src_index[i]]);
    penalty_token* list = lists + static_cast<std::int64_t>(l) * stride;
    const std::int32_t len = std::clamp(lens[l], 0, stride);
    penalty_token* end = list + len;
    penalty_token* e =
        std::find_if(list, end, [token](const penalty_token& p) { return p.token == token; });
    if (e != end) {
      ++e->output_count;
    } else if (len < stride) {
      *e = penalty_token{token, 1, 0};
      lens[l] = len + 1;
    }
  }
}

std::vector<sample_result> sim_device::sample(tensor_view logits, const sampling_batch& batch) {
  require_f32(logits, "logits");
  for (const sampling_row& row : batch.rows) {
    if (row.mask_begin >= 0 && static_cast<std::size_t>(row.mask_begin + mask_words_per_row(
                                   logits.cols)) > batch.mask_words.size()) {
      throw std::invalid_argument("sim sample: a row's mask lies outside the batch's mask words");
    }
    if (row.penalty_list >= 0 &&
        (row.penalty_count != 0 || row.penalty_list >= batch.num_penalty_lists ||
         !batch.penalty_lists || !batch.penalty_list_lens ||
         batch.penalty_list_lens[row.penalty_list] < 0 ||
         batch.penalty_list_lens[row.penalty_list] > batch.penalty_list_stride)) {
      throw std::invalid_argument(
          "sim sample: a row's penalty list is not one of the batch's, or has a slice too");
    }
    if (row.bias_list >= 0 &&
        (row.bias_begin != 0 || row.bias_count < 0 || row.bias_count > max_bias_tokens ||
         row.bias_list >= batch.num_bias_lists || !batch.bias_lists)) {
      throw std::invalid_argument(
          "sim sample: a row's bias list is not one of the batch's, or has a slice too");
    }
    if (row.end_count < 0 || row.end_count > max_end_tokens ||
        (row.end_count > 0 && (row.end_begin < 0 || static_cast<std::size_t>(row.end_begin) +
                                                            row.end_count >
                                                        batch.end_tokens.size()))) {
      throw std::invalid_argument("sim sample: a row's end tokens lie outside the batch's");
    }
    if (row.score_token >= 0 &&
        (row.score_token >= logits.cols || row.mask_begin >= 0 || row.bias_count > 0 ||
         row.end_count > 0 ||
         row.penalty_count > 0 || row.penalty_list >= 0 || row.bias_list >= 0)) {
      throw std::invalid_argument(
          "sim sample: a scoring row's token is outside the vocabulary, or the row has a mask, "
          "bias or penalties");
    }
  }
  std::vector<sample_result> out(static_cast<std::size_t>(logits.rows));
  pool_.parallel_for(logits.rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      sampling_batch one;
      one.rows = {batch.rows[r]};
      one.rows[0].penalty_begin = 0;
      if (batch.rows[r].penalty_list >= 0) {  // a list kept in (the sim's host) device memory
        const std::int32_t l = batch.rows[r].penalty_list;
        const penalty_token* list =
            batch.penalty_lists + static_cast<std::int64_t>(l) * batch.penalty_list_stride;
        one.penalty_tokens.assign(list, list + batch.penalty_list_lens[l]);
        one.rows[0].penalty_list = -1;
      } else {
        one.penalty_tokens.assign(batch.penalty_tokens.begin() + batch.rows[r].penalty_begin,
                                  batch.penalty_tokens.begin() + batch.rows[r].penalty_begin +
                                      batch.rows[r].penalty_count);
      }
      one.rows[0].penalty_count = static_cast<std::int32_t>(one.penalty_tokens.size());
      one.rows[0].bias_begin = 0;
      if (batch.rows[r].bias_list >= 0) {  // a list kept in (the sim's host) device memory
        const bias_token* list =
            batch.bias_lists + std::int64_t{batch.rows[r].bias_list} * max_bias_tokens;
        one.bias_tokens.assign(list, list + batch.rows[r].bias_count);
        one.rows[0].bias_list = -1;
      } else {
        one.bias_tokens.assign(
            batch.bias_tokens.begin() + batch.rows[r].bias_begin,
            batch.bias_tokens.begin() + batch.rows[r].bias_begin + batch.rows[r].bias_count);
      }
      if (batch.rows[r].end_count > 0) {
        const auto first = batch.end_tokens.begin() + batch.rows[r].end_begin;
        one.end_tokens.assign(first, first + batch.rows[r].end_count);
        one.rows[0].end_begin = 0;
      }
      if (batch.rows[r].mask_begin >= 0) {
        const auto first = batch.mask_words.begin() + batch.rows[r].mask_begin;
        one.rows[0].mask_begin = 0;
        one.mask_words.assign(first, first + mask_words_per_row(logits.cols));
      }
      out[r] = std::move(sample_rows(logits.as<float>() + r * logits.cols, 1, logits.cols, one)[0]);
    }
  });
  return out;
}

}  // namespace courier::gpu::sim
