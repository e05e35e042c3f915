// The CUDA Mamba-2 kernels (gpu/cuda/kernels/mamba) against the sim's ops (gpu/sim/sim_mamba,
// itself held to the chunked SSD form and torch's conv1d in tests/gpu/sim/mamba_test.cpp) on
// random bf16 inputs: a batch of two sequences, one starting fresh and one continuing from a
// state, run twice so the second run continues from the first's states. The sim's answers are
// computed on every machine; the kernels only where a GPU is present.
#include "gpu/cuda/kernels/mamba.hpp"

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/dtype.hpp"
#include "gpu/sim/sim_mamba.hpp"
#include "tests/gpu/cuda/kernel_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_mamba {

namespace {

using namespace courier::test::kernels;

// Sequence 0 (state row 2): 9 tokens from position 0; sequence 1 (state row 0): 5 tokens from
// position 7, continuing from its state. Then one more token each (a decode step), then a row
// verifying drafts beside a decode row.
struct batch_case {
  std::vector<std::int32_t> token_state, positions;
  std::vector<std::int32_t> save;  // empty: no save rows
  std::int32_t T() const { return static_cast<std::int32_t>(token_state.size()); }
};

batch_case prefill_case() {
  batch_case b;
  for (int i = 0; i < 9; ++i) {
    b.token_state.push_back(2);
    b.positions.push_back(i);
  }
  for (int i = 0; i < 5; ++i) {
    b.token_state.push_back(0);
    b.positions.push_back(7 + i);
  }
  return b;
}

batch_case decode_case() { return {{0, 2}, {12, 9}}; }

// Sequence 0 verifies 3 drafts: its states after its first 3 tokens go to rows 4, 5, 6 (more
// than the conv's K - 1 = 3 back, so saves read both the state before and the step's inputs).
batch_case verify_case() { return {{2, 2, 2, 2, 0}, {10, 11, 12, 13, 13}, {4, 5, 6, -1, -1}}; }

void require_close_f32(const std::vector<float>& got, const std::vector<float>& want, float rel) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= rel * std::max(1.0f, std::fabs(want[i])));
  }
}

}  // namespace

TEST_CASE("cuda mamba conv1d and scan match the sim, states carried between launches", "[gpu]") {
  constexpr std::int64_t heads = 4, P = 8, N = 16, groups = 2, K = 4;
  constexpr std::int64_t inter = heads * P, C = inter + 2 * groups * N;
  constexpr std::int64_t proj_cols = inter + C + heads;
  constexpr std::int64_t rows = 7;  // state rows
  gpu::mamba_shape shape;
  shape.num_heads = heads;
  shape.head_dim = P;
  shape.state_size = N;
  shape.n_groups = groups;
  shape.dt_min = 0.001f;
  const auto w = random_values(C * K, -0.5f, 0.5f, 1), bias = random_values(C, -0.1f, 0.1f, 2);
  const auto A_log = random_values(heads, 0.0f, 1.5f, 3), dt_bias = random_values(heads, -1, 1, 4),
             D = random_values(heads, 0.5f, 1.5f, 5);
  // Row 0's states (sequence 1 continues from them): small values; the rest garbage.
  const auto conv0 = random_values(rows * C * (K - 1), -1, 1, 6);
  const auto ssm0 = random_values(rows * heads * P * N, -0.5f, 0.5f, 7);
  const std::vector<batch_case> steps = {prefill_case(), decode_case(), verify_case()};

  // The sim: conv then scan for each step, keeping the outputs and the final states.
  auto sim = gpu::make_sim_device(1, 64);
  std::vector<std::vector<float>> projs, want_conv, want_y;
  std::vector<float> conv_states = conv0, ssm_states = ssm0;
  gpu::device_buffer sim_conv = sim_put_raw(*sim, conv_states);
  gpu::device_buffer sim_ssm = sim_put_raw(*sim, ssm_states);
  const sim_tensor sw = sim_put(*sim, w, C, K), sb = sim_put(*sim, bias, 1, C),
                   sa = sim_put(*sim, A_log, 1, heads), sdt = sim_put(*sim, dt_bias, 1, heads),
                   sd = sim_put(*sim, D, 1, heads);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const batch_case& b = steps[k];
    projs.push_back(random_values(b.T() * proj_cols, -2, 2, 10 + static_cast<unsigned>(k)));
    const sim_tensor proj = sim_put(*sim, projs.back(), b.T(), proj_cols);
    const sim_tensor xbc = sim_put(*sim, std::vector<float>(b.T() * C), b.T(), C);
    const sim_tensor y = sim_put(*sim, std::vector<float>(b.T() * inter), b.T(), inter);
    gpu::device_buffer ts = sim_put_raw(*sim, b.token_state), pos = sim_put_raw(*sim, b.positions);
    gpu::device_buffer sv = sim_put_raw(*sim, b.save.empty() ? b.token_state : b.save);
    const gpu::mamba_batch mb{static_cast<const std::int32_t*>(ts.data()),
                              static_cast<const std::int32_t*>(pos.data()), b.T(),
                              b.save.empty() ? nullptr : static_cast<const std::int32_t*>(sv.data())};
    sim->mamba_conv1d(proj.view, inter, sw.view, sb.view, static_cast<float*>(sim_conv.data()), mb,
                      xbc.view);
    // The CUDA kernel reads its xbc in bf16: so does the sim's scan here.
    std::vector<float> conv_out = sim_get(*sim, xbc);
    want_conv.push_back(conv_out);
    for (float& v : conv_out) v = gpu::bf16_to_f32(gpu::f32_to_bf16(v));
    const sim_tensor xbc16 = sim_put(*sim, conv_out, b.T(), C);
    sim->mamba_scan(xbc16.view, proj.view, inter + C, sa.view, sdt.view, sd.view, shape,
                    static_cast<float*>(sim_ssm.data()), mb, y.view);
    want_y.push_back(sim_get(*sim, y));
  }
  sim->download(conv_states.data(), sim_conv.data(), conv_states.size() * sizeof(float));
  sim->download(ssm_states.data(), sim_ssm.data(), ssm_states.size() * sizeof(float));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  cuda_buffer cw = cuda_put(to_bf16(w)), cb = cuda_put(to_bf16(bias)),
              ca = cuda_put(to_bf16(A_log)), cdt = cuda_put(to_bf16(dt_bias)),
              cd = cuda_put(to_bf16(D)), cconv = cuda_put(conv0), cssm = cuda_put(ssm0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    INFO("step " << k);
    const batch_case& b = steps[k];
    cuda_buffer proj = cuda_put(to_bf16(projs[k])), xbc = cuda_put(bits(b.T() * C)),
                y = cuda_put(bits(b.T() * inter)), ts = cuda_put(b.token_state),
                pos = cuda_put(b.positions),
                sv = cuda_put(b.save.empty() ? b.token_state : b.save);
    const gpu::mamba_batch mb{static_cast<const std::int32_t*>(ts.get()),
                              static_cast<const std::int32_t*>(pos.get()), b.T(),
                              b.save.empty() ? nullptr : static_cast<const std::int32_t*>(sv.get())};
    CUDA_CHECK(cuda::launch_mamba_conv1d(proj.get(), proj_cols, inter, C, K, cw.get(), cb.get(),
                                         static_cast<float*>(cconv.get()), mb, xbc.get(),
                                         nullptr));
    require_close(cuda_get<std::uint16_t>(xbc, want_conv[k].size()), want_conv[k], 1e-2f);
    CUDA_CHECK(cuda::launch_mamba_scan(xbc.get(), C, proj.get(), proj_cols, inter + C, ca.get(),
                                       cdt.get(), cd.get(), shape,
                                       static_cast<float*>(cssm.get()), mb, y.get(), nullptr));
    require_close(cuda_get<std::uint16_t>(y, want_y[k].size()), want_y[k], 2e-2f);
  }
  require_close_f32(cuda_get<float>(cconv, conv_states.size()), conv_states, 1e-2f);
  require_close_f32(cuda_get<float>(cssm, ssm_states.size()), ssm_states, 1e-2f);
}

TEST_CASE("cuda select_draft_states matches the sim", "[gpu]") {
  // Two layers of 10 rows of 5 floats (conv) and 7 (ssm); three verified rows: one draft of 3
  // standing, all 2 standing, none of 4.
  const std::vector<std::int32_t> sampled = {7, 8, 9, 9, 4, 5, 6, 1, 1, 1, 1, 1};
  const std::vector<std::int32_t> ids = {0, 7, 3, 9, 0, 4, 5, 0, 2, 2, 2, 2};
  const std::vector<gpu::draft_states> rows = {{0, 1, 3, 5, 0}, {4, 5, 2, 7, 1}, {7, 8, 4, 3, 2}};
  auto conv = random_values(2 * 10 * 5, -1, 1, 31), ssm = random_values(2 * 10 * 7, -1, 1, 32);
  std::vector<float> want_conv = conv, want_ssm = ssm;
  courier::gpu::sim::select_draft_states(
      sampled.data(), ids.data(), rows.data(), 3,
      {{want_conv.data(), 5, 50, 2}, {want_ssm.data(), 7, 70, 2}});
  REQUIRE(want_conv != conv);  // the case copies something
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  std::vector<std::int32_t> packed;
  for (const auto& r : rows) {
    packed.insert(packed.end(), {r.first_sample, r.first_draft, r.num_drafts, r.save_row, r.slot});
  }
  cuda_buffer cs = cuda_put(sampled), ci = cuda_put(ids), cr = cuda_put(packed),
              cc = cuda_put(conv), ch = cuda_put(ssm);
  CUDA_CHECK(cuda::launch_select_draft_states(
      static_cast<const std::int32_t*>(cs.get()), static_cast<const std::int32_t*>(ci.get()),
      static_cast<const gpu::draft_states*>(cr.get()), 3,
      {static_cast<float*>(cc.get()), 5, 50, 2}, {static_cast<float*>(ch.get()), 7, 70, 2},
      nullptr));
  CHECK(cuda_get<float>(cc, conv.size()) == want_conv);
  CHECK(cuda_get<float>(ch, ssm.size()) == want_ssm);
}

TEST_CASE("cuda gated_rms_norm and relu2 match the sim", "[gpu]") {
  constexpr std::int64_t T = 5, n = 64, group = 16, ld_gate = 100;
  const auto y = random_values(T * n, -2, 2, 21), gate = random_values(T * ld_gate, -2, 2, 22),
             w = random_values(n, 0.5f, 1.5f, 23);
  auto sim = gpu::make_sim_device(1, 64);
  const sim_tensor sy = sim_put(*sim, y, T, n), sg = sim_put(*sim, gate, T, ld_gate),
                   sw = sim_put(*sim, w, 1, n);
  const sim_tensor out = sim_put(*sim, std::vector<float>(T * n), T, n);
  sim->gated_rms_norm(sy.view, sg.view, sw.view, group, 1e-5f, out.view);
  const std::vector<float> want = sim_get(*sim, out);
  const sim_tensor r = sim_put(*sim, std::vector<float>(T * n), T, n);
  sim->relu2(sy.view, r.view);
  const std::vector<float> want_relu2 = sim_get(*sim, r);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  cuda_buffer cy = cuda_put(to_bf16(y)), cg = cuda_put(to_bf16(gate)), cw = cuda_put(to_bf16(w)),
              co = cuda_put(bits(T * n)), cr = cuda_put(bits(T * n));
  CUDA_CHECK(cuda::launch_gated_rms_norm(cy.get(), cg.get(), ld_gate, cw.get(), T, n, group, 1e-5f,
                                         co.get(), nullptr));
  require_close(cuda_get<std::uint16_t>(co, want.size()), want, 1e-2f);
  CUDA_CHECK(cuda::launch_relu2(cy.get(), cr.get(), T * n, nullptr));
  require_close(cuda_get<std::uint16_t>(cr, want_relu2.size()), want_relu2, 1e-2f);
}

TEST_CASE("cuda gated_square_sums and gated_rms_norm_summed: a group on two ranks matches the "
          "sim's whole-group norm",
          "[gpu]") {
  constexpr std::int64_t T = 5, n = 32, half = 16, ld_gate = 40, S = 3, col = 1;
  const auto y = random_values(T * n, -2, 2, 31), gate = random_values(T * ld_gate, -2, 2, 32),
             w = random_values(n, 0.5f, 1.5f, 33);
  auto sim = gpu::make_sim_device(1, 64);
  const sim_tensor sy = sim_put(*sim, y, T, n), sg = sim_put(*sim, gate, T, ld_gate),
                   sw = sim_put(*sim, w, 1, n);
  const sim_tensor out = sim_put(*sim, std::vector<float>(T * n), T, n);
  sim->gated_rms_norm(sy.view, sg.view, sw.view, n, 1e-5f, out.view);
  const std::vector<float> want = sim_get(*sim, out);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  // Each "rank" holds half the group's columns: its y [T, half], its gate's columns, its w.
  std::vector<std::vector<float>> ys(2), gates(2), ws(2);
  for (int r = 0; r < 2; ++r) {
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t i = 0; i < half; ++i) {
        ys[r].push_back(y[t * n + r * half + i]);
        gates[r].push_back(gate[t * ld_gate + r * half + i]);
      }
    }
    ws[r].assign(w.begin() + r * half, w.begin() + (r + 1) * half);
  }
  std::vector<float> sums(T * S, 0.0f);  // what the all-reduce adds up
  std::vector<cuda_buffer> cy, cg;
  for (int r = 0; r < 2; ++r) {
    cy.push_back(cuda_put(to_bf16(ys[r])));
    cg.push_back(cuda_put(to_bf16(gates[r])));
    cuda_buffer cs = cuda_put(std::vector<float>(T * S, 7.0f));  // every column is written
    CUDA_CHECK(cuda::launch_gated_square_sums(cy[r].get(), cg[r].get(), half, T, half,
                                              static_cast<float*>(cs.get()), S, col, nullptr));
    const std::vector<float> part = cuda_get<float>(cs, sums.size());
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t c = 0; c < S; ++c) {
        if (c != col) CHECK(part[t * S + c] == 0.0f);
      }
    }
    for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += part[i];
  }
  cuda_buffer cs = cuda_put(sums);
  for (int r = 0; r < 2; ++r) {
    cuda_buffer cw = cuda_put(to_bf16(ws[r])), co = cuda_put(bits(T * half));
    CUDA_CHECK(cuda::launch_gated_rms_norm_summed(cy[r].get(), cg[r].get(), half, cw.get(), T,
                                                  half, static_cast<const float*>(cs.get()), S,
                                                  col, n, 1e-5f, co.get(), nullptr));
    std::vector<float> want_r;
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t i = 0; i < half; ++i) want_r.push_back(want[t * n + r * half + i]);
    }
    require_close(cuda_get<std::uint16_t>(co, want_r.size()), want_r, 1e-2f);
  }
}

}  // namespace courier_test_gpu_cuda_mamba
