// The sim's LoRA op (device::lora_apply): per token, u = A_s x, then out += B_s u, every sum in
// index order in f32.
#include <stdexcept>

#include "gpu/sim/sim_device.hpp"

namespace courier::gpu::sim {

void sim_device::lora_apply(tensor_view x, const lora_weights& w, const std::int32_t* slots,
                            tensor_view tmp, tensor_view out) {
  const std::int64_t T = x.rows, K = x.cols, N = out.cols, R = w.rank, P = w.parts;
  if (x.type != dtype::f32 || out.type != dtype::f32 || tmp.type != dtype::f32 ||
      w.a.type != dtype::f32 || w.b.type != dtype::f32) {
    throw std::invalid_argument("sim device: lora_apply takes f32 tensors");
  }
  if (P < 1 || P > 3 || R < 1 || w.slots < 1 || out.rows != T || tmp.rows < T || tmp.cols < P * R ||
      w.a.rows != w.slots * P * R || w.a.cols != K || w.b.rows != w.slots * N || w.b.cols != R ||
      w.part_end[P - 1] != N) {
    throw std::invalid_argument("sim device: lora_apply shapes do not agree");
  }
  for (std::int64_t t = 0; t < T; ++t) {
    if (slots[t] >= w.slots) {
      throw std::invalid_argument("sim device: lora_apply slot outside the pool");
    }
  }
  pool_.parallel_for(T, 1, [&](std::int64_t tb, std::int64_t te) {
    for (std::int64_t t = tb; t < te; ++t) {
      const std::int64_t s = slots[t];
      if (s < 0) continue;
      const float* xt = x.as<float>() + t * K;
      float* u = tmp.as<float>() + t * tmp.cols;
      const float* a = w.a.as<float>() + s * P * R * K;
      for (std::int64_t i = 0; i < P * R; ++i) {
        float acc = 0.0f;
        for (std::int64_t k = 0; k < K; ++k) acc += a[i * K + k] * xt[k];
        u[i] = acc;
      }
      const float* b = w.b.as<float>() + s * N * R;
      float* o = out.as<float>() + t * N;
      std::int64_t p = 0;
      for (std::int64_t c = 0; c < N; ++c) {
        while (c >= w.part_end[p]) ++p;
        float acc = 0.0f;
        for (std::int64_t j = 0; j < R; ++j) acc += b[c * R + j] * u[p * R + j];
        o[c] += acc;
      }
    }
  });
}

}  // namespace courier::gpu::sim
