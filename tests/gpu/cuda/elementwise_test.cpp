// Tests of the CUDA element-wise kernels against the sim backend's f32 ops on random inputs. The
// inputs are rounded to bf16 first, so both sides see the same values. Each test builds its cases
// and the sim's reference before asking for a GPU, so that part runs on every machine.
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

namespace {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
using bits = std::vector<std::uint16_t>;

// n uniform values in [lo, hi), each rounded to bf16.
std::vector<float> random_values(std::size_t n, float lo, float hi, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = gpu::bf16_to_f32(gpu::f32_to_bf16(dist(rng)));
  return v;
}

std::vector<std::int32_t> random_ints(std::size_t n, std::int32_t lo, std::int32_t hi_incl,
                                      std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(lo, hi_incl);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bits to_bf16(const std::vector<float>& v) {
  bits b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = gpu::f32_to_bf16(v[i]);
  return b;
}

// --- the sim side: f32 buffers of a sim device ---

struct sim_tensor {
  gpu::device_buffer buf;
  gpu::tensor_view view;
};

sim_tensor sim_put(gpu::device& d, const std::vector<float>& v, std::int64_t rows,
                   std::int64_t cols) {
  sim_tensor t;
  t.buf = d.allocate(v.size() * sizeof(float));
  d.upload(t.buf.data(), v.data(), v.size() * sizeof(float));
  t.view = t.buf.view(gpu::dtype::f32, rows, cols);
  return t;
}

template <class T>
gpu::device_buffer sim_put_raw(gpu::device& d, const std::vector<T>& v) {
  gpu::device_buffer b = d.allocate(v.size() * sizeof(T));
  d.upload(b.data(), v.data(), v.size() * sizeof(T));
  return b;
}

std::vector<float> sim_get(gpu::device& d, const sim_tensor& t) {
  std::vector<float> v(static_cast<std::size_t>(t.view.numel()));
  d.download(v.data(), t.buf.data(), v.size() * sizeof(float));
  return v;
}

// --- the CUDA side ---

struct cuda_free {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using cuda_buffer = std::unique_ptr<void, cuda_free>;

template <class T>
cuda_buffer cuda_put(const std::vector<T>& v) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, v.size() * sizeof(T))));
  cuda_buffer b(p);
  CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

template <class T>
std::vector<T> cuda_get(const cuda_buffer& b, std::size_t n) {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// Every element NaN-free and within rel * max(1, |want|) of want.
void require_close(const bits& got, const std::vector<float>& want, float rel) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float g = gpu::bf16_to_f32(got[i]);
    const bool ok =
        !std::isnan(g) && std::fabs(g - want[i]) <= rel * std::max(1.0f, std::fabs(want[i]));
    if (!ok && bad++ == 0) first_bad = i;
  }
  INFO("first mismatch at " << first_bad << ": got " << gpu::bf16_to_f32(got[first_bad])
                            << ", want " << want[first_bad]);
  REQUIRE(bad == 0);
}

// want holds bf16 values (copies of inputs): the result must be those bits exactly.
void require_same_bf16(const bits& got, const std::vector<float>& want) {
  REQUIRE(got == to_bf16(want));
}

}  // namespace

TEST_CASE("cuda embedding copies the table rows of the ids like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, h;
  };
  const std::vector<shape> shapes = {{1, 4096}, {7, 896}, {33, 100}, {7, 99}};
  const std::int64_t vocab = 257;
  struct case_data {
    shape s;
    std::vector<float> table;
    std::vector<std::int32_t> ids;
    std::vector<float> want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s, random_values(vocab * s.h, -3, 3, 1), random_ints(s.t, 0, vocab - 1, 2), {}};
    sim_tensor table = sim_put(*sim, c.table, vocab, s.h);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.h), s.t, s.h);
    gpu::device_buffer ids = sim_put_raw(*sim, c.ids);
    sim->embedding(static_cast<const std::int32_t*>(ids.data()), table.view, out.view);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " H=" << c.s.h);
    cuda_buffer table = cuda_put(to_bf16(c.table)), ids = cuda_put(c.ids);
    cuda_buffer out = cuda_put(bits(c.s.t * c.s.h));
    CUDA_CHECK(cuda::launch_embedding(static_cast<const std::int32_t*>(ids.get()), c.s.t,
                                      table.get(), vocab, c.s.h, out.get(), nullptr));
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

TEST_CASE("cuda head_rms_norm normalises every head slice like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, heads;
    std::int32_t hd;
  };
  const std::vector<shape> shapes = {
      {1, 14, 64}, {7, 2, 128}, {33, 14, 128}, {7, 3, 36}, {5, 3, 25}};
  const float eps = 1e-6f;
  struct case_data {
    shape s;
    std::vector<float> x, w, want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    const std::int64_t cols = s.heads * s.hd;
    case_data c{s, random_values(s.t * cols, -3, 3, 8), random_values(s.hd, 0.5f, 1.5f, 9), {}};
    sim_tensor x = sim_put(*sim, c.x, s.t, cols), w = sim_put(*sim, c.w, 1, s.hd);
    sim->head_rms_norm(x.view, s.hd, w.view, eps);
    c.want = sim_get(*sim, x);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " heads=" << c.s.heads << " head_dim=" << c.s.hd);
    cuda_buffer x = cuda_put(to_bf16(c.x)), w = cuda_put(to_bf16(c.w));
    CUDA_CHECK(
        cuda::launch_head_rms_norm(x.get(), w.get(), eps, c.s.t, c.s.heads, c.s.hd, nullptr));
    require_close(cuda_get<std::uint16_t>(x, c.want.size()), c.want, 1e-2f);
  }
}

TEST_CASE("cuda rope rotates q and k halves like the sim op with GQA heads", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t;
    std::int32_t nq, nk, hd;
  };
  const std::vector<shape> shapes = {
      {1, 14, 2, 64}, {7, 14, 2, 128}, {33, 14, 2, 64}, {7, 3, 1, 36}, {3, 2, 1, 6}};
  struct case_data {
    shape s;
    std::vector<float> q, k, inv_freq, want_q, want_k;
    std::vector<std::int32_t> positions;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s,
                random_values(s.t * s.nq * s.hd, -2, 2, 10),
                random_values(s.t * s.nk * s.hd, -2, 2, 11),
                {},
                {},
                {},
                random_ints(s.t, 0, 32767, 12)};
    for (std::int32_t i = 0; i < s.hd / 2; ++i) {
      c.inv_freq.push_back(static_cast<float>(1.0 / std::pow(1e6, 2.0 * i / s.hd)));
    }
    sim_tensor q = sim_put(*sim, c.q, s.t, s.nq * s.hd), k = sim_put(*sim, c.k, s.t, s.nk * s.hd);
    gpu::device_buffer pos = sim_put_raw(*sim, c.positions), freq = sim_put_raw(*sim, c.inv_freq);
    sim->rope(q.view, k.view, s.hd, static_cast<const std::int32_t*>(pos.data()),
              static_cast<const float*>(freq.data()));
    c.want_q = sim_get(*sim, q);
    c.want_k = sim_get(*sim, k);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " nq=" << c.s.nq << " nk=" << c.s.nk << " head_dim=" << c.s.hd);
    cuda_buffer q = cuda_put(to_bf16(c.q)), k = cuda_put(to_bf16(c.k));
    cuda_buffer pos = cuda_put(c.positions), freq = cuda_put(c.inv_freq);
    CUDA_CHECK(cuda::launch_rope(q.get(), k.get(), c.s.t, c.s.nq, c.s.nk, c.s.hd,
                                 static_cast<const std::int32_t*>(pos.get()),
                                 static_cast<const float*>(freq.get()), nullptr));
    require_close(cuda_get<std::uint16_t>(q, c.want_q.size()), c.want_q, 1e-2f);
    require_close(cuda_get<std::uint16_t>(k, c.want_k.size()), c.want_k, 1e-2f);
  }
}

TEST_CASE("cuda kv_write stores k and v rows at their slots like the sim op", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t;
    std::int32_t nkv, hd;
  };
  const std::vector<shape> shapes = {{7, 2, 64}, {33, 2, 128}, {1, 2, 128}, {7, 1, 6}, {7, 1, 5}};
  const std::int32_t num_blocks = 8, block_size = 16;
  struct case_data {
    shape s;
    std::vector<float> k, v, k_cache, v_cache, want_k, want_v;
    std::vector<std::int32_t> slots;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    const std::int64_t width = s.nkv * s.hd, cache_n = num_blocks * block_size * width;
    std::vector<std::int32_t> slots(num_blocks * block_size);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), std::mt19937(13));
    slots.resize(s.t);  // distinct slots
    case_data c{s,
                random_values(s.t * width, -2, 2, 14),
                random_values(s.t * width, -2, 2, 15),
                random_values(cache_n, -1, 1, 16),
                random_values(cache_n, -1, 1, 17),
                {},
                {},
                slots};
    sim_tensor k = sim_put(*sim, c.k, s.t, width), v = sim_put(*sim, c.v, s.t, width);
    sim_tensor kc = sim_put(*sim, c.k_cache, num_blocks * block_size, width);
    sim_tensor vc = sim_put(*sim, c.v_cache, num_blocks * block_size, width);
    gpu::device_buffer slot_buf = sim_put_raw(*sim, c.slots);
    gpu::kv_cache_view cache{kc.buf.data(), vc.buf.data(), gpu::dtype::f32, num_blocks, block_size,
                             s.nkv,         s.hd};
    sim->kv_write(k.view, v.view, static_cast<const std::int32_t*>(slot_buf.data()), cache);
    c.want_k = sim_get(*sim, kc);
    c.want_v = sim_get(*sim, vc);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " num_kv_heads=" << c.s.nkv << " head_dim=" << c.s.hd);
    cuda_buffer k = cuda_put(to_bf16(c.k)), v = cuda_put(to_bf16(c.v));
    cuda_buffer kc = cuda_put(to_bf16(c.k_cache)), vc = cuda_put(to_bf16(c.v_cache));
    cuda_buffer slots = cuda_put(c.slots);
    gpu::kv_cache_view cache{kc.get(), vc.get(), gpu::dtype::bf16, num_blocks, block_size,
                             c.s.nkv,  c.s.hd};
    CUDA_CHECK(cuda::launch_kv_write(
        k.get(), v.get(), static_cast<const std::int32_t*>(slots.get()), c.s.t, cache, nullptr));
    // The whole cache: written slots and untouched ones.
    require_same_bf16(cuda_get<std::uint16_t>(kc, c.want_k.size()), c.want_k);
    require_same_bf16(cuda_get<std::uint16_t>(vc, c.want_v.size()), c.want_v);
  }
}

TEST_CASE("cuda silu_mul matches the sim op element-wise", "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  struct shape {
    std::int64_t t, i;
  };
  const std::vector<shape> shapes = {{1, 4864}, {7, 896}, {33, 100}, {3, 37}};
  struct case_data {
    shape s;
    std::vector<float> gate, up, want;
  };
  std::vector<case_data> cases;
  for (const shape& s : shapes) {
    case_data c{s, random_values(s.t * s.i, -8, 8, 18), random_values(s.t * s.i, -2, 2, 19), {}};
    sim_tensor g = sim_put(*sim, c.gate, s.t, s.i), u = sim_put(*sim, c.up, s.t, s.i);
    sim_tensor out = sim_put(*sim, std::vector<float>(s.t * s.i), s.t, s.i);
    sim->silu_mul(g.view, u.view, out.view);
    c.want = sim_get(*sim, out);
    cases.push_back(std::move(c));
  }
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " I=" << c.s.i);
    cuda_buffer g = cuda_put(to_bf16(c.gate)), u = cuda_put(to_bf16(c.up));
    cuda_buffer out = cuda_put(bits(c.s.t * c.s.i));
    CUDA_CHECK(cuda::launch_silu_mul(g.get(), u.get(), out.get(), c.s.t * c.s.i, nullptr));
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
