#include "gpu/sim/sim_mamba.hpp"

#include <algorithm>
#include <cmath>

namespace courier::gpu::sim {

namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

std::vector<mamba_span> mamba_spans(const gpu::mamba_batch& batch) {
  std::vector<mamba_span> spans;
  for (std::int64_t t = 0; t < batch.num_tokens; ++t) {
    const std::int64_t row = batch.token_state[t];
    if (spans.empty() || spans.back().state != row) {
      spans.push_back({t, 0, row, batch.positions[t] == 0,
                       batch.save_row ? batch.save_row + t : nullptr});
    }
    ++spans.back().count;
  }
  return spans;
}

void mamba_conv1d(const float* in, std::int64_t ld_in, std::int64_t C, std::int32_t K,
                  const float* w, const float* bias, float* states,
                  const std::vector<mamba_span>& spans, float* out, std::int64_t c_begin,
                  std::int64_t c_end) {
  const std::int64_t keep = K - 1;
  std::vector<float> window(static_cast<std::size_t>(K));
  for (const mamba_span& sp : spans) {
    for (std::int64_t c = c_begin; c < c_end; ++c) {
      float* state = states + (sp.state * C + c) * keep;
      // window[0, K - 1): the inputs before the token, oldest first; window[K - 1]: the token's.
      for (std::int64_t k = 0; k < keep; ++k) {
        window[static_cast<std::size_t>(k)] = sp.fresh ? 0.0f : state[k];
      }
      const float* wc = w + c * K;
      for (std::int64_t i = 0; i < sp.count; ++i) {
        const std::int64_t t = sp.first + i;
        window[static_cast<std::size_t>(keep)] = in[t * ld_in + c];
        float acc = bias ? bias[c] : 0.0f;
        for (std::int32_t k = 0; k < K; ++k) acc += wc[k] * window[static_cast<std::size_t>(k)];
        out[t * C + c] = silu(acc);
        for (std::int64_t k = 0; k < keep; ++k) {
          window[static_cast<std::size_t>(k)] = window[static_cast<std::size_t>(k + 1)];
        }
        if (sp.save && sp.save[i] >= 0) {
          float* saved = states + (sp.save[i] * C + c) * keep;
          for (std::int64_t k = 0; k < keep; ++k) saved[k] = window[static_cast<std::size_t>(k)];
        }
      }
      for (std::int64_t k = 0; k < keep; ++k) state[k] = window[static_cast<std::size_t>(k)];
    }
  }
}

void mamba_scan(const float* xbc, std::int64_t ld_xbc, const float* dt_raw, std::int64_t ld_dt,
                const float* A_log, const float* dt_bias, const float* D,
                const mamba_scan_shape& s, float* states, const std::vector<mamba_span>& spans,
                float* y, std::int32_t h_begin, std::int32_t h_end) {
  const std::int64_t P = s.head_dim, N = s.state_size;
  const std::int64_t inter = static_cast<std::int64_t>(s.num_heads) * P;
  const std::int64_t heads_per_group = s.num_heads / s.n_groups;
  for (const mamba_span& sp : spans) {
    for (std::int32_t h = h_begin; h < h_end; ++h) {
      float* S = states + (sp.state * s.num_heads + h) * P * N;  // [P, N]
      if (sp.fresh) {
        for (std::int64_t i = 0; i < P * N; ++i) S[i] = 0.0f;
      }
      const float A = -std::exp(A_log[h]);
      const std::int64_t g = h / heads_per_group;
      for (std::int64_t i = 0; i < sp.count; ++i) {
        const std::int64_t t = sp.first + i;
        const float* row = xbc + t * ld_xbc;
        const float* x = row + h * P;
        const float* B = row + inter + g * N;
        const float* Cm = row + inter + s.n_groups * N + g * N;
        float dt = softplus(dt_raw[t * ld_dt + h] + dt_bias[h]);
        if (dt < s.dt_min) dt = s.dt_min;
        const float dA = std::exp(dt * A);
        float* out = y + t * inter + h * P;
        for (std::int64_t p = 0; p < P; ++p) {
          float* Sp = S + p * N;
          const float dtx = dt * x[p];
          float acc = 0.0f;
          for (std::int64_t n = 0; n < N; ++n) {
            Sp[n] = Sp[n] * dA + dtx * B[n];
            acc += Sp[n] * Cm[n];
          }
          out[p] = acc + D[h] * x[p];
        }
        if (sp.save && sp.save[i] >= 0) {
          float* saved = states + (sp.save[i] * s.num_heads + h) * P * N;
          for (std::int64_t e = 0; e < P * N; ++e) saved[e] = S[e];
        }
      }
    }
  }
}

void select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                         const gpu::draft_states* rows, std::int32_t n,
                         const std::vector<gpu::state_buffer>& buffers) {
  for (std::int32_t i = 0; i < n; ++i) {
    const gpu::draft_states& r = rows[i];
    std::int32_t a = 0;
    while (a < r.num_drafts && sampled[r.first_sample + a] == ids[r.first_draft + a]) ++a;
    if (a == r.num_drafts) continue;  // every draft stands: the slot holds the state after them
    for (const gpu::state_buffer& b : buffers) {
      for (std::int32_t l = 0; l < b.layers; ++l) {
        float* layer = b.base + l * b.layer_floats;
        std::copy_n(layer + (r.save_row + a) * b.row_floats, b.row_floats,
                    layer + static_cast<std::int64_t>(r.slot) * b.row_floats);
      }
    }
  }
}

void gated_rms_norm_row(const float* y, const float* z, const float* w, std::int64_t n,
                        std::int64_t group, float eps, float* out) {
  for (std::int64_t g0 = 0; g0 < n; g0 += group) {
    double ss = 0.0;
    for (std::int64_t i = g0; i < g0 + group; ++i) {
      const float v = y[i] * silu(z[i]);
      out[i] = v;
      ss += static_cast<double>(v) * v;
    }
    const float var = static_cast<float>(ss / static_cast<double>(group));
    const float inv = 1.0f / std::sqrt(var + eps);
    for (std::int64_t i = g0; i < g0 + group; ++i) out[i] = w[i] * (out[i] * inv);
  }
}

float gated_square_sum_row(const float* y, const float* z, std::int64_t n) {
  double ss = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = y[i] * silu(z[i]);
    ss += static_cast<double>(v) * v;
  }
  return static_cast<float>(ss);
}

void gated_scale_row(const float* y, const float* z, const float* w, std::int64_t n, float inv,
                     float* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = w[i] * ((y[i] * silu(z[i])) * inv);
}

}  // namespace courier::gpu::sim
