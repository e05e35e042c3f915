// Tests of the CUDA element-wise kernels against the sim backend's f32 ops on random inputs. The
// inputs are rounded to bf16 first, so both sides see the same values. Each test builds its cases
// and the sim's reference before asking for a GPU, so that part runs on every machine. The fused
// q/k norm + RoPE + KV write kernel has its own file, elementwise_qkv_test.cpp.
#include "gpu/cuda/kernels/elementwise.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/dtype.hpp"
#include "tests/gpu/cuda/kernel_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_elementwise {

namespace {

using namespace courier::test::kernels;

}  // namespace

TEST_CASE("cuda embedding copies the table rows of the ids like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, h;
  };
  const std::vector<shape> shapes = {{1, 4096}, {7, 896}, {33, 100}, {7, 99}};
  const std::int64_t vocab = 257;
  // The whole table, and a vocab-parallel rank's rows [100, 200) (other ids: zero rows).
  struct range {
    std::int64_t first, rows;
  };
  const std::vector<range> ranges = {{0, vocab}, {100, 100}};
  struct case_data {
    shape s;
    range r;
    std::vector<float> table;
    std::vector<std::int32_t> ids;
    std::vector<float> want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    for (const range& r : ranges) {
      const std::vector<float> all = random_values(vocab * s.h, -3, 3, 1);
      case_data c{s, r,
                  std::vector<float>(all.begin() + r.first * s.h,
                                     all.begin() + (r.first + r.rows) * s.h),
                  random_ints(s.t, 0, vocab - 1, 2), {}};
      sim_tensor table = sim_put(*sim, c.table, r.rows, s.h);
      sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.h), s.t, s.h);
      gpu::device_buffer ids = sim_put_raw(*sim, c.ids);
      sim->embedding(static_cast<const std::int32_t*>(ids.data()), table.view, r.first, out.view);
      c.want = sim_get(*sim, out);
      cases.push_back(std::move(c));
    }
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " H=" << c.s.h << " first id " << c.r.first);
    cuda_buffer table = cuda_put(to_bf16(c.table)), ids = cuda_put(c.ids);
    cuda_buffer out = cuda_put(bits(c.s.t * c.s.h));
    CUDA_CHECK(cuda::launch_embedding(static_cast<const std::int32_t*>(ids.get()), c.s.t,
                                      table.get(), c.r.first, c.r.rows, c.s.h, out.get(),
                                      nullptr));
    require_same_bf16(cuda_get<std::uint16_t>(out, c.want.size()), c.want);
  }
}

TEST_CASE("cuda rms_norm matches the sim op on random rows", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, h;
  };
  const std::vector<shape> shapes = {{1, 4096}, {7, 896}, {33, 100}, {7, 99}, {33, 4096}};
  const float eps = 1e-6f;
  struct case_data {
    shape s;
    std::vector<float> x, w, want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s, random_values(s.t * s.h, -2, 2, 3), random_values(s.h, 0.5f, 1.5f, 4), {}};
    sim_tensor x = sim_put(*sim, c.x, s.t, s.h), w = sim_put(*sim, c.w, 1, s.h);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.h), s.t, s.h);
    sim->rms_norm(x.view, w.view, eps, out.view);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " H=" << c.s.h);
    cuda_buffer x = cuda_put(to_bf16(c.x)), w = cuda_put(to_bf16(c.w));
    cuda_buffer out = cuda_put(bits(c.s.t * c.s.h));
    CUDA_CHECK(cuda::launch_rms_norm(x.get(), w.get(), eps, out.get(), c.s.t, c.s.h, nullptr));
    const bits got = cuda_get<std::uint16_t>(out, c.want.size());
    require_close(got, c.want, 1e-2f);
    // The last row alone gives the same bits as in the batch.
    const std::int64_t last = c.s.t - 1;
    const bits row(got.begin() + last * c.s.h, got.end());
    const bits x_bf16 = to_bf16(c.x);
    cuda_buffer x1 = cuda_put(bits(x_bf16.begin() + last * c.s.h, x_bf16.end()));
    cuda_buffer out1 = cuda_put(bits(c.s.h));
    CUDA_CHECK(cuda::launch_rms_norm(x1.get(), w.get(), eps, out1.get(), 1, c.s.h, nullptr));
    REQUIRE(cuda_get<std::uint16_t>(out1, row.size()) == row);
  }
}

TEST_CASE("cuda add_rms_norm stores the bf16 sum and normalises it like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, h;
  };
  const std::vector<shape> shapes = {{1, 4096}, {7, 896}, {33, 100}, {7, 99}};
  const float eps = 1e-5f;
  struct case_data {
    shape s;
    std::vector<float> residual, x, w, want_residual, want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s,
                random_values(s.t * s.h, -4, 4, 5),
                random_values(s.t * s.h, -1, 1, 6),
                random_values(s.h, 0.5f, 1.5f, 7),
                {},
                {}};
    sim_tensor r = sim_put(*sim, c.residual, s.t, s.h), x = sim_put(*sim, c.x, s.t, s.h);
    sim_tensor w = sim_put(*sim, c.w, 1, s.h);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.h), s.t, s.h);
    sim->add_rms_norm(r.view, x.view, w.view, eps, out.view);
    c.want_residual = sim_get(*sim, r);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " H=" << c.s.h);
    cuda_buffer r = cuda_put(to_bf16(c.residual)), x = cuda_put(to_bf16(c.x));
    cuda_buffer w = cuda_put(to_bf16(c.w)), out = cuda_put(bits(c.s.t * c.s.h));
    CUDA_CHECK(cuda::launch_add_rms_norm(r.get(), x.get(), w.get(), eps, out.get(), c.s.t, c.s.h,
                                         nullptr));
    // The stored residual is the sim's f32 sum rounded once to bf16.
    REQUIRE(cuda_get<std::uint16_t>(r, c.want.size()) == to_bf16(c.want_residual));
    require_close(cuda_get<std::uint16_t>(out, c.want.size()), c.want, 1e-2f);
  }
}

TEST_CASE("cuda silu_mul reads gate and up from the halves of each row like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, i;
  };
  // 4864 and 896 take 8-wide vectors, 100 and 38 2-wide, 37 single elements.
  const std::vector<shape> shapes = {{1, 4864}, {7, 896}, {33, 100}, {3, 38}, {3, 37}};
  struct case_data {
    shape s;
    std::vector<float> gate_up, want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s, random_values(s.t * 2 * s.i, -8, 8, 18), {}};
    sim_tensor gu = sim_put(*sim, c.gate_up, s.t, 2 * s.i);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.i), s.t, s.i);
    sim->silu_mul(gu.view, out.view);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " I=" << c.s.i);
    cuda_buffer gu = cuda_put(to_bf16(c.gate_up));
    cuda_buffer out = cuda_put(bits(c.s.t * c.s.i));
    CUDA_CHECK(cuda::launch_silu_mul(gu.get(), out.get(), c.s.t, c.s.i, nullptr));
    require_close(cuda_get<std::uint16_t>(out, c.want.size()), c.want, 1e-2f);
  }
}

TEST_CASE("cuda gather_rows copies bf16 and f32 rows like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t n, c;
    std::size_t elem;
  };
  const std::vector<shape> shapes = {{1, 4096, 2},  {7, 896, 2},  {33, 99, 2},
                                     {7, 32000, 4}, {33, 100, 4}, {7, 33, 4}};
  const std::int64_t num_x_rows = 40;
  struct case_data {
    shape s;
    std::vector<float> x;
    std::vector<std::int32_t> rows;
    std::vector<float> want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s,
                random_values(num_x_rows * s.c, -30, 30, 20),
                random_ints(s.n, 0, num_x_rows - 1, 21),
                {}};
    sim_tensor x = sim_put(*sim, c.x, num_x_rows, s.c);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.n * s.c), s.n, s.c);
    gpu::device_buffer rows = sim_put_raw(*sim, c.rows);
    sim->gather_rows(x.view, static_cast<const std::int32_t*>(rows.data()), out.view);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("n=" << c.s.n << " C=" << c.s.c << " element bytes=" << c.s.elem);
    cuda_buffer rows = cuda_put(c.rows);
    const auto* rp = static_cast<const std::int32_t*>(rows.get());
    if (c.s.elem == 2) {
      cuda_buffer x = cuda_put(to_bf16(c.x)), out = cuda_put(bits(c.s.n * c.s.c));
      CUDA_CHECK(
          cuda::launch_gather_rows(x.get(), num_x_rows, c.s.c, 2, rp, c.s.n, out.get(), nullptr));
      require_same_bf16(cuda_get<std::uint16_t>(out, c.want.size()), c.want);
    } else {
      cuda_buffer x = cuda_put(c.x), out = cuda_put(std::vector<float>(c.s.n * c.s.c));
      CUDA_CHECK(
          cuda::launch_gather_rows(x.get(), num_x_rows, c.s.c, 4, rp, c.s.n, out.get(), nullptr));
      REQUIRE(cuda_get<float>(out, c.want.size()) == c.want);
    }
  }
  // A row index outside x gives a zero row.
  cuda_buffer x = cuda_put(std::vector<float>(num_x_rows * 8, 1.0f));
  cuda_buffer rows =
      cuda_put(std::vector<std::int32_t>{-1, static_cast<std::int32_t>(num_x_rows), 0});
  cuda_buffer out = cuda_put(std::vector<float>(3 * 8, 7.0f));
  CUDA_CHECK(cuda::launch_gather_rows(x.get(), num_x_rows, 8, 4,
                                      static_cast<const std::int32_t*>(rows.get()), 3, out.get(),
                                      nullptr));
  std::vector<float> want(3 * 8, 0.0f);
  std::fill(want.begin() + 16, want.end(), 1.0f);
  REQUIRE(cuda_get<float>(out, want.size()) == want);
}

TEST_CASE("cuda conversions between f32 and bf16 agree bit for bit with the host and sim",
          "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  // Random magnitudes across the range, then the edge cases: zeros, infinities, NaNs with payloads,
  // ties to even, overflow to infinity, subnormals.
  std::vector<float> f32 = random_values(1001, -1e4f, 1e4f, 22);
  std::mt19937 rng(23);
  for (int i = 0; i < 1000; ++i) {
    std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, sizeof f);
    f32.push_back(f);
  }
  for (std::uint32_t u :
       {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
        0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x00000001u, 0x807fffffu, 0x3f7fffffu}) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    f32.push_back(f);
  }
  const bits want_bf16 = to_bf16(f32);
  // bf16 -> f32: the sim's load_weight widening of those bits.
  gpu::host_tensor t{want_bf16.data(),
                     gpu::dtype::bf16,
                     {static_cast<std::int64_t>(want_bf16.size())},
                     want_bf16.size() * 2};
  gpu::device_buffer loaded = sim->load_weight(t);
  std::vector<float> want_f32(want_bf16.size());
  sim->download(want_f32.data(), loaded.data(), want_f32.size() * sizeof(float));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const auto n = static_cast<std::int64_t>(f32.size());
  for (std::int64_t offset : {0, 1}) {  // aligned (vector path) and misaligned (scalar path)
    INFO("offset " << offset);
    cuda_buffer in = cuda_put(f32), out = cuda_put(bits(f32.size()));
    CUDA_CHECK(cuda::launch_convert_f32_to_bf16(static_cast<const float*>(in.get()) + offset,
                                                static_cast<std::uint16_t*>(out.get()) + offset,
                                                n - offset, nullptr));
    const bits got = cuda_get<std::uint16_t>(out, f32.size());
    REQUIRE(bits(got.begin() + offset, got.end()) ==
            bits(want_bf16.begin() + offset, want_bf16.end()));

    cuda_buffer b_in = cuda_put(want_bf16), f_out = cuda_put(std::vector<float>(f32.size()));
    CUDA_CHECK(cuda::launch_convert_bf16_to_f32(
        static_cast<const std::uint16_t*>(b_in.get()) + offset,
        static_cast<float*>(f_out.get()) + offset, n - offset, nullptr));
    const std::vector<float> got_f = cuda_get<float>(f_out, f32.size());
    REQUIRE(std::memcmp(got_f.data() + offset, want_f32.data() + offset,
                        (f32.size() - offset) * sizeof(float)) == 0);
  }
}

}  // namespace courier_test_gpu_cuda_elementwise
