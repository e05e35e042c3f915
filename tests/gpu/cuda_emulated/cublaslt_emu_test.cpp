// The emulated cuBLASLt (gpu/cuda_emu/libs), opened by path and its functions found by name as
// courier's lazy loader does, against the cuBLAS documentation's rules: column-major (and
// row-major) matrices with leading dimensions, D = alpha * op(A) * op(B) + beta * C computed in
// double here, the BIAS epilogue, strided batches, bf16 outputs rounded to nearest even, the
// heuristic and workspace limits, the refusals, the stream order the matmul runs in (captured
// into graphs like any work), and the fault of an operand outside its allocation.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "gpu/dtype.hpp"
#include "tests/gpu/cuda_emulated/in_child.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_cublaslt_emu {

using namespace courier;
using test::emulated::child_end;
using test::emulated::in_child;

namespace {

// The library's entry points, found by name in the library opened by path.
struct api {
  void* lib = nullptr;
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmulAlgoCheck) check = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
};

#define COURIER_TEST_LOAD(field, name) \
  a.field = reinterpret_cast<decltype(a.field)>(dlsym(a.lib, #name))

const api& lt() {
  static const api loaded = [] {
    api a;
    a.lib = dlopen(COURIER_EMU_CUBLASLT_PATH, RTLD_NOW | RTLD_LOCAL);
    if (a.lib == nullptr) return a;
    COURIER_TEST_LOAD(create, cublasLtCreate);
    COURIER_TEST_LOAD(destroy, cublasLtDestroy);
    COURIER_TEST_LOAD(layout_create, cublasLtMatrixLayoutCreate);
    COURIER_TEST_LOAD(layout_destroy, cublasLtMatrixLayoutDestroy);
    COURIER_TEST_LOAD(layout_set, cublasLtMatrixLayoutSetAttribute);
    COURIER_TEST_LOAD(desc_create, cublasLtMatmulDescCreate);
    COURIER_TEST_LOAD(desc_destroy, cublasLtMatmulDescDestroy);
    COURIER_TEST_LOAD(desc_set, cublasLtMatmulDescSetAttribute);
    COURIER_TEST_LOAD(pref_create, cublasLtMatmulPreferenceCreate);
    COURIER_TEST_LOAD(pref_destroy, cublasLtMatmulPreferenceDestroy);
    COURIER_TEST_LOAD(pref_set, cublasLtMatmulPreferenceSetAttribute);
    COURIER_TEST_LOAD(heuristic, cublasLtMatmulAlgoGetHeuristic);
    COURIER_TEST_LOAD(check, cublasLtMatmulAlgoCheck);
    COURIER_TEST_LOAD(matmul, cublasLtMatmul);
    return a;
  }();
  return loaded;
}

#undef COURIER_TEST_LOAD

// A matrix's description and its column-major (or row-major) storage, as doubles here.
struct matrix {
  cudaDataType type = CUDA_R_32F;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  bool row_major = false;
  std::int32_t batch = 1;
  std::int64_t stride = 0;  // elements between batch members
  std::int64_t at(std::uint64_t r, std::uint64_t c, std::int64_t b) const {
    const auto ri = static_cast<std::int64_t>(r), ci = static_cast<std::int64_t>(c);
    return b * stride + (row_major ? ri * ld + ci : ci * ld + ri);
  }
  std::size_t elements() const {
    const std::int64_t one = static_cast<std::int64_t>(row_major ? rows : cols) * ld;
    return static_cast<std::size_t>(stride * (batch - 1) + one);
  }
};

cublasLtMatrixLayout_t make_layout(const matrix& m) {
  cublasLtMatrixLayout_t l = nullptr;
  REQUIRE(lt().layout_create(&l, m.type, m.rows, m.cols, m.ld) == CUBLAS_STATUS_SUCCESS);
  const std::int32_t order = m.row_major ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL;
  REQUIRE(lt().layout_set(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order) ==
          CUBLAS_STATUS_SUCCESS);
  REQUIRE(lt().layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &m.batch, sizeof m.batch) ==
          CUBLAS_STATUS_SUCCESS);
  REQUIRE(lt().layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &m.stride,
                          sizeof m.stride) == CUBLAS_STATUS_SUCCESS);
  return l;
}

// n elements in the current device's memory (cudaMalloc'd, zeroed): cuBLASLt's operands are
// device memory, which the emulator lets the host read and write in place.
template <typename T>
class device_array {
 public:
  explicit device_array(std::size_t n) : n_(n) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)) ==
            cudaSuccess);
    std::fill(p_, p_ + n_, T{});
  }
  device_array(const device_array& o) : device_array(o.n_) { std::copy(o.begin(), o.end(), p_); }
  device_array& operator=(const device_array&) = delete;
  device_array& operator=(std::initializer_list<T> values) {
    REQUIRE(values.size() == n_);
    std::copy(values.begin(), values.end(), p_);
    return *this;
  }
  ~device_array() { cudaFree(p_); }
  T& operator[](std::size_t i) { return p_[i]; }
  const T& operator[](std::size_t i) const { return p_[i]; }
  T* data() { return p_; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  std::size_t size() const { return n_; }
  std::vector<T> values() const { return std::vector<T>(begin(), end()); }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

// Device storage of a matrix's type: f32 values, or bf16 bit patterns.
struct buffer {
  cudaDataType type;
  device_array<float> f;
  device_array<std::uint16_t> h;
  buffer(cudaDataType t, std::size_t n)
      : type(t), f(t == CUDA_R_32F ? n : 0), h(t == CUDA_R_32F ? 0 : n) {}
  void* data() { return type == CUDA_R_32F ? static_cast<void*>(f.data()) : h.data(); }
  void set(std::int64_t i, double v) {
    if (type == CUDA_R_32F) {
      f[static_cast<std::size_t>(i)] = static_cast<float>(v);
    } else {
      h[static_cast<std::size_t>(i)] = gpu::f32_to_bf16(static_cast<float>(v));
    }
  }
  double get(std::int64_t i) const {
    return type == CUDA_R_32F ? f[static_cast<std::size_t>(i)]
                              : gpu::bf16_to_f32(h[static_cast<std::size_t>(i)]);
  }
};

// One matmul's descriptors, destroyed together.
struct plan {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  plan(const matrix& ma, const matrix& mb, const matrix& mc, const matrix& md, cublasOperation_t ta,
       cublasOperation_t tb) {
    REQUIRE(lt().lib != nullptr);
    REQUIRE(lt().create(&handle) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(lt().desc_create(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(lt().desc_set(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(lt().desc_set(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) ==
            CUBLAS_STATUS_SUCCESS);
    a = make_layout(ma);
    b = make_layout(mb);
    c = make_layout(mc);
    d = make_layout(md);
  }
  ~plan() {
    for (cublasLtMatrixLayout_t l : {a, b, c, d}) lt().layout_destroy(l);
    lt().desc_destroy(op);
    lt().destroy(handle);
  }
  plan(const plan&) = delete;
  plan& operator=(const plan&) = delete;
  void set_bias(const void* bias, cudaDataType type) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    REQUIRE(lt().desc_set(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) ==
            CUBLAS_STATUS_SUCCESS);
    const std::int32_t t = type;
    REQUIRE(lt().desc_set(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof t) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(lt().desc_set(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) ==
            CUBLAS_STATUS_SUCCESS);
  }
  cublasStatus_t heuristic(std::uint64_t max_workspace, cublasLtMatmulHeuristicResult_t* results,
                           int requested, int* found) const {
    cublasLtMatmulPreference_t pref = nullptr;
    REQUIRE(lt().pref_create(&pref) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(lt().pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                          sizeof max_workspace) == CUBLAS_STATUS_SUCCESS);
    const cublasStatus_t s =
        lt().heuristic(handle, op, a, b, c, d, pref, requested, results, found);
    lt().pref_destroy(pref);
    return s;
  }
  cublasStatus_t run(float alpha, const void* pa, const void* pb, float beta, const void* pc,
                     void* pd, const cublasLtMatmulAlgo_t* algo, void* ws, std::size_t ws_bytes,
                     cudaStream_t s) const {
    return lt().matmul(handle, op, &alpha, pa, a, pb, b, &beta, pc, c, pd, d, algo, ws, ws_bytes,
                       s);
  }
};

// op(X)(r, q) of batch member `b`.
double op_at(const matrix& m, const buffer& x, bool trans, std::uint64_t r, std::uint64_t q,
             std::int64_t b) {
  return x.get(trans ? m.at(q, r, b) : m.at(r, q, b));
}

// The documented result in double: alpha * op(A) op(B) + beta * C (+ bias per row of D).
double expected(const matrix& ma, const buffer& a, bool ta, const matrix& mb, const buffer& b,
                bool tb, const matrix& mc, const buffer& c, double alpha, double beta,
                const buffer* bias, std::int64_t bias_stride, std::uint64_t i, std::uint64_t j,
                std::uint64_t k, std::int64_t batch) {
  double acc = 0;
  for (std::uint64_t q = 0; q < k; ++q) {
    acc += op_at(ma, a, ta, i, q, batch) * op_at(mb, b, tb, q, j, batch);
  }
  double v = alpha * acc + beta * c.get(mc.at(i, j, batch));
  if (bias != nullptr) v += bias->get(batch * bias_stride + static_cast<std::int64_t>(i));
  return v;
}

// Small integers and halves: every product and sum below is exact in f32.
void fill(const matrix& m, buffer& x, int seed) {
  for (std::size_t e = 0; e < m.elements(); ++e) {
    x.set(static_cast<std::int64_t>(e),
          static_cast<double>((static_cast<int>(e) * 7 + seed) % 11 - 5) * 0.5);
  }
}

cudaStream_t new_stream() {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  return s;
}

}  // namespace

TEST_CASE("emulated cublasLt: D = alpha op(A) op(B) + beta C, transposes, lds, in stream order",
          "[emulated]") {
  const std::uint64_t m = 3, n = 4, k = 5;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      INFO("transa " << ta << " transb " << tb);
      const matrix ma{CUDA_R_32F, ta ? k : m, ta ? m : k, 7};
      const matrix mb{CUDA_R_32F, tb ? n : k, tb ? k : n, 6};
      const matrix mc{CUDA_R_32F, m, n, 5}, md{CUDA_R_32F, m, n, 4};
      buffer a(CUDA_R_32F, ma.elements()), b(CUDA_R_32F, mb.elements()),
          c(CUDA_R_32F, mc.elements());
      buffer d(CUDA_R_32F, md.elements());
      fill(ma, a, 1);
      fill(mb, b, 2);
      fill(mc, c, 3);
      for (float& v : d.f) v = 1234.0f;
      plan p(ma, mb, mc, md, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N);
      const cudaStream_t s = new_stream();
      REQUIRE(p.run(2.0f, a.data(), b.data(), -0.5f, c.data(), d.data(), nullptr, nullptr, 0, s) ==
              CUBLAS_STATUS_SUCCESS);
      CHECK(d.f[0] == 1234.0f);  // queued: nothing runs until the stream is waited for
      REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
      for (std::uint64_t j = 0; j < n; ++j) {
        for (std::uint64_t i = 0; i < m; ++i) {
          CHECK(d.get(md.at(i, j, 0)) ==
                expected(ma, a, ta, mb, b, tb, mc, c, 2.0, -0.5, nullptr, 0, i, j, k, 0));
        }
        CHECK(d.f[static_cast<std::size_t>(md.at(m, j, 0))] ==
              1234.0f);  // past the rows: untouched
      }
      REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
    }
  }
}

TEST_CASE("emulated cublasLt: bf16 in and out with the BIAS epilogue, rounded to nearest even",
          "[emulated]") {
  // courier's linear: A = w [K, N] used transposed, B = x [K, M], D = out [N, M], bias per row.
  const std::uint64_t rows = 4, cols = 3, k = 8;
  const matrix ma{CUDA_R_16BF, k, rows, k}, mb{CUDA_R_16BF, k, cols, k};
  const matrix md{CUDA_R_16BF, rows, cols, rows};
  buffer a(CUDA_R_16BF, ma.elements()), b(CUDA_R_16BF, mb.elements()),
      d(CUDA_R_16BF, md.elements());
  buffer bias(CUDA_R_16BF, rows), zero(CUDA_R_16BF, md.elements());
  fill(ma, a, 4);
  fill(mb, b, 5);
  // 256 + 1 and 256 + 3 need rounding in bf16 (8 significant bits): to 256 and 260, the even
  // neighbours of the ties.
  for (std::uint64_t i = 0; i < rows; ++i) {
    bias.set(static_cast<std::int64_t>(i), i % 2 ? 256.0 : 0.0);
  }
  a.set(ma.at(0, 1, 0), 1.0);
  for (std::uint64_t q = 0; q < k; ++q) b.set(mb.at(q, 0, 0), q == 0 ? 3.0 : 0.0);
  plan p(ma, mb, md, md, CUBLAS_OP_T, CUBLAS_OP_N);
  p.set_bias(bias.data(), CUDA_R_16BF);
  const cudaStream_t s = new_stream();
  REQUIRE(p.run(1.0f, a.data(), b.data(), 0.0f, d.data(), d.data(), nullptr, nullptr, 0, s) ==
          CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  for (std::uint64_t j = 0; j < cols; ++j) {
    for (std::uint64_t i = 0; i < rows; ++i) {
      const double want =
          expected(ma, a, true, mb, b, false, md, zero, 1.0, 0.0, &bias, 0, i, j, k, 0);
      CHECK(d.h[static_cast<std::size_t>(md.at(i, j, 0))] ==
            gpu::f32_to_bf16(static_cast<float>(want)));
    }
  }
  CHECK(gpu::bf16_to_f32(d.h[static_cast<std::size_t>(md.at(1, 0, 0))]) == 260.0f);  // 256 + 3
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("emulated cublasLt: strided batches, row-major B, bias batch stride", "[emulated]") {
  const std::uint64_t m = 2, n = 3, k = 4;
  const std::int32_t batches = 3;
  const matrix ma{CUDA_R_32F, m, k, 2, false, batches, 9};
  const matrix mb{CUDA_R_32F, k, n, 5, true, batches, 21};
  const matrix mc{CUDA_R_32F, m, n, 3, false, batches, 10};
  buffer a(CUDA_R_32F, ma.elements()), b(CUDA_R_32F, mb.elements()), c(CUDA_R_32F, mc.elements());
  buffer bias(CUDA_R_32F, 3 * batches);
  fill(ma, a, 6);
  fill(mb, b, 7);
  fill(mc, c, 8);
  for (std::size_t i = 0; i < bias.f.size(); ++i) bias.f[i] = static_cast<float>(i) * 10.0f;
  const buffer c_before = c;
  plan p(ma, mb, mc, mc, CUBLAS_OP_N, CUBLAS_OP_N);
  p.set_bias(bias.data(), CUDA_R_32F);
  const std::int64_t bias_stride = 3;
  REQUIRE(lt().desc_set(p.op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                        sizeof bias_stride) == CUBLAS_STATUS_SUCCESS);
  const cudaStream_t s = new_stream();
  // In place: C and D are one matrix.
  REQUIRE(p.run(1.0f, a.data(), b.data(), 1.0f, c.data(), c.data(), nullptr, nullptr, 0, s) ==
          CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  for (std::int64_t batch = 0; batch < batches; ++batch) {
    for (std::uint64_t j = 0; j < n; ++j) {
      for (std::uint64_t i = 0; i < m; ++i) {
        const double want = expected(ma, a, false, mb, b, false, mc, c_before, 1.0, 1.0, &bias,
                                     bias_stride, i, j, k, batch);
        CHECK(c.get(mc.at(i, j, batch)) == want);
      }
    }
  }
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("emulated cublasLt: the heuristic, algorithm check and workspace limits", "[emulated]") {
  const std::uint64_t m = 3, n = 2, k = 6;
  const matrix ma{CUDA_R_32F, m, k, m}, mb{CUDA_R_32F, k, n, k}, mc{CUDA_R_32F, m, n, m};
  buffer a(CUDA_R_32F, ma.elements()), b(CUDA_R_32F, mb.elements()), c(CUDA_R_32F, mc.elements());
  fill(ma, a, 1);
  fill(mb, b, 2);
  plan p(ma, mb, mc, mc, CUBLAS_OP_N, CUBLAS_OP_N);
  cublasLtMatmulHeuristicResult_t results[4] = {};
  int found = -1;
  CHECK(p.heuristic(0, results, 0, &found) == CUBLAS_STATUS_INVALID_VALUE);
  // No workspace allowed (the preference's default): only algorithms that need none.
  REQUIRE(p.heuristic(0, results, 4, &found) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(found >= 1);
  for (int i = 0; i < found; ++i) CHECK(results[i].workspaceSize == 0);
  // With room, the split-K algorithm too, which needs an f32 D-sized workspace.
  const std::size_t need = m * n * sizeof(float);
  REQUIRE(p.heuristic(1 << 20, results, 4, &found) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(found == 2);
  CHECK(results[0].state == CUBLAS_STATUS_SUCCESS);
  CHECK(results[1].workspaceSize == need);
  cublasLtMatmulHeuristicResult_t checked{};
  REQUIRE(lt().check(p.handle, p.op, p.a, p.b, p.c, p.c, &results[1].algo, &checked) ==
          CUBLAS_STATUS_SUCCESS);
  CHECK(checked.workspaceSize == need);
  void* ws = nullptr;
  REQUIRE(cudaMalloc(&ws, need) == cudaSuccess);
  const cudaStream_t s = new_stream();
  CHECK(p.run(1.0f, a.data(), b.data(), 0.0f, c.data(), c.data(), &results[1].algo, ws, need - 4,
              s) == CUBLAS_STATUS_INVALID_VALUE);
  REQUIRE(p.run(1.0f, a.data(), b.data(), 0.0f, c.data(), c.data(), &results[1].algo, ws, need,
                s) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  for (std::uint64_t j = 0; j < n; ++j) {
    for (std::uint64_t i = 0; i < m; ++i) {
      CHECK(c.get(mc.at(i, j, 0)) ==
            expected(ma, a, false, mb, b, false, mc, c, 1.0, 0.0, nullptr, 0, i, j, k, 0));
    }
  }
  cublasLtMatmulAlgo_t foreign{};
  CHECK(lt().check(p.handle, p.op, p.a, p.b, p.c, p.c, &foreign, &checked) ==
        CUBLAS_STATUS_INVALID_VALUE);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(cudaFree(ws) == cudaSuccess);
}

TEST_CASE("emulated cublasLt: refused types, bias types, layouts and attributes", "[emulated]") {
  cublasLtMatmulHeuristicResult_t r[2] = {};
  int found = 0;
  const matrix bf_a{CUDA_R_16BF, 8, 4, 8}, bf_b{CUDA_R_16BF, 8, 3, 8};
  {  // bf16 inputs to an f32 D: supported; its bias must then be f32, not bf16 (the type table).
    const matrix f_d{CUDA_R_32F, 4, 3, 4};
    plan p(bf_a, bf_b, f_d, f_d, CUBLAS_OP_T, CUBLAS_OP_N);
    CHECK(p.heuristic(0, r, 2, &found) == CUBLAS_STATUS_SUCCESS);
    float bias[4] = {};
    p.set_bias(bias, CUDA_R_16BF);
    CHECK(p.heuristic(0, r, 2, &found) == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(found == 0);
    p.set_bias(bias, CUDA_R_32F);
    CHECK(p.heuristic(0, r, 2, &found) == CUBLAS_STATUS_SUCCESS);
  }
  {  // f32 inputs to a bf16 D: not a supported combination.
    const matrix fa{CUDA_R_32F, 8, 4, 8}, fb{CUDA_R_32F, 8, 3, 8}, bd{CUDA_R_16BF, 4, 3, 4};
    plan p(fa, fb, bd, bd, CUBLAS_OP_T, CUBLAS_OP_N);
    CHECK(p.heuristic(0, r, 2, &found) == CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {  // A leading dimension under the rows, and shapes that do not chain: invalid values.
    const matrix short_ld{CUDA_R_16BF, 8, 4, 7}, d{CUDA_R_16BF, 4, 3, 4},
        wrong_d{CUDA_R_16BF, 5, 3, 5};
    plan p1(short_ld, bf_b, d, d, CUBLAS_OP_T, CUBLAS_OP_N);
    CHECK(p1.heuristic(0, r, 2, &found) == CUBLAS_STATUS_INVALID_VALUE);
    plan p2(bf_a, bf_b, wrong_d, wrong_d, CUBLAS_OP_T, CUBLAS_OP_N);
    CHECK(p2.heuristic(0, r, 2, &found) == CUBLAS_STATUS_INVALID_VALUE);
    const cublasOperation_t ta = CUBLAS_OP_T;
    CHECK(lt().desc_set(p2.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, 2) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(lt().desc_set(p2.op, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, sizeof ta) ==
          CUBLAS_STATUS_INVALID_VALUE);
    const cublasLtEpilogue_t relu = CUBLASLT_EPILOGUE_RELU;
    plan p3(bf_a, bf_b, d, d, CUBLAS_OP_T, CUBLAS_OP_N);
    REQUIRE(lt().desc_set(p3.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &relu, sizeof relu) ==
            CUBLAS_STATUS_SUCCESS);
    CHECK(p3.heuristic(0, r, 2, &found) == CUBLAS_STATUS_NOT_SUPPORTED);  // not emulated
  }
}

TEST_CASE("emulated cublasLt: a captured matmul keeps its call's arguments across replays",
          "[emulated]") {
  const std::uint64_t m = 2, n = 2;  // and k = 2
  const matrix mm{CUDA_R_32F, m, n, 2};
  buffer a(CUDA_R_32F, 4), b(CUDA_R_32F, 4), d(CUDA_R_32F, 4);
  a.f = {1, 2, 3, 4};  // column-major [[1, 3], [2, 4]]
  b.f = {1, 0, 0, 1};  // the identity
  device_array<float> bias1(2), bias2(2);
  bias1 = {10, 20};
  bias2 = {-100, -100};
  plan p(mm, mm, mm, mm, CUBLAS_OP_N, CUBLAS_OP_N);
  p.set_bias(bias1.data(), CUDA_R_32F);
  const cudaStream_t s = new_stream();
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(p.run(2.0f, a.data(), b.data(), 1.0f, d.data(), d.data(), nullptr, nullptr, 0, s) ==
          CUBLAS_STATUS_SUCCESS);
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &g) == cudaSuccess);
  p.set_bias(bias2.data(), CUDA_R_32F);  // after the call: the captured matmul keeps bias1
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  d.f = {0, 0, 0, 0};
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);  // beta 1: D accumulates 2A + bias twice
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(d.f.values() == std::vector<float>{2 * (2 + 10), 2 * (4 + 20), 2 * (6 + 10), 2 * (8 + 20)});
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(g) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("emulated cublasLt: device pointer mode reads alpha and beta when the matmul runs",
          "[emulated]") {
  const matrix mm{CUDA_R_32F, 1, 1, 1};
  buffer a(CUDA_R_32F, 1), b(CUDA_R_32F, 1), c(CUDA_R_32F, 1), d(CUDA_R_32F, 1);
  a.f = {3};
  b.f = {5};
  c.f = {7};
  plan p(mm, mm, mm, mm, CUBLAS_OP_N, CUBLAS_OP_N);
  const std::int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
  REQUIRE(lt().desc_set(p.op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode) ==
          CUBLAS_STATUS_SUCCESS);
  float* scalars = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&scalars), 2 * sizeof(float)) == cudaSuccess);
  scalars[0] = 1;
  scalars[1] = 1;
  const cudaStream_t s = new_stream();
  REQUIRE(lt().matmul(p.handle, p.op, &scalars[0], a.data(), p.a, b.data(), p.b, &scalars[1],
                      c.data(), p.c, d.data(), p.d, nullptr, nullptr, 0,
                      s) == CUBLAS_STATUS_SUCCESS);
  scalars[0] = 2;  // before the matmul runs: it reads these
  scalars[1] = -1;
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(d.f[0] == 2 * 15 - 7);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(cudaFree(scalars) == cudaSuccess);
}

// A GPU faults on an operand the layouts make reach past its allocation, or one freed since the
// call (a graph replayed after the free): here the device's sticky cudaErrorIllegalAddress, said
// on stderr, with D left as it was. In a child process: the sticky error stays with the device.
// The child's exit code says which step went wrong (no Catch assertion runs there).
TEST_CASE("emulated cublasLt: an operand past its allocation, or freed since the call, faults the "
          "device and leaves D as it was",
          "[emulated]") {
  REQUIRE(lt().lib != nullptr);
  for (const bool replay_after_free : {false, true}) {
    INFO((replay_after_free ? "A freed before a replay" : "B's layout past its allocation"));
    const child_end end = in_child([replay_after_free] {
      cublasLtHandle_t h = nullptr;
      cublasLtMatmulDesc_t op = nullptr;
      cublasLtMatrixLayout_t square = nullptr, wide = nullptr;
      float *a = nullptr, *b = nullptr, *d = nullptr;
      cudaStream_t s = nullptr;
      // 2 x 2 matrices of 4 floats; described with leading dimension 3, B's second column is
      // elements 3 and 4: one past its allocation.
      if (lt().create(&h) != CUBLAS_STATUS_SUCCESS ||
          lt().desc_create(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
          lt().layout_create(&square, CUDA_R_32F, 2, 2, 2) != CUBLAS_STATUS_SUCCESS ||
          lt().layout_create(&wide, CUDA_R_32F, 2, 2, 3) != CUBLAS_STATUS_SUCCESS ||
          cudaMalloc(reinterpret_cast<void**>(&a), 4 * sizeof(float)) != cudaSuccess ||
          cudaMalloc(reinterpret_cast<void**>(&b), 4 * sizeof(float)) != cudaSuccess ||
          cudaMalloc(reinterpret_cast<void**>(&d), 4 * sizeof(float)) != cudaSuccess ||
          cudaStreamCreate(&s) != cudaSuccess) {
        _exit(3);
      }
      for (int i = 0; i < 4; ++i) {
        a[i] = 1;
        b[i] = 1;
        d[i] = -1;
      }
      const float one = 1, zero = 0;
      cudaGraphExec_t exec = nullptr;
      if (replay_after_free) {
        cudaGraph_t g = nullptr;
        if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess ||
            lt().matmul(h, op, &one, a, square, b, square, &zero, d, square, d, square, nullptr,
                        nullptr, 0, s) != CUBLAS_STATUS_SUCCESS ||
            cudaStreamEndCapture(s, &g) != cudaSuccess ||
            cudaGraphInstantiate(&exec, g, 0) != cudaSuccess || cudaFree(a) != cudaSuccess ||
            cudaGraphLaunch(exec, s) != cudaSuccess) {
          _exit(4);
        }
      } else if (lt().matmul(h, op, &one, a, square, b, wide, &zero, d, square, d, square,
                             nullptr, nullptr, 0, s) != CUBLAS_STATUS_SUCCESS) {
        _exit(4);  // the layouts are valid: only running the matmul finds the fault
      }
      if (cudaStreamSynchronize(s) != cudaErrorIllegalAddress) _exit(5);
      _exit(std::all_of(d, d + 4, [](float v) { return v == -1; }) ? 0 : 6);
    });
    INFO(end.err);
    CHECK(WIFEXITED(end.status));
    CHECK(WEXITSTATUS(end.status) == 0);
    CHECK(end.err.find(replay_after_free ? "cublasLtMatmul's A on device 0 touches 16 bytes"
                                         : "cublasLtMatmul's B on device 0 touches 20 bytes") !=
          std::string::npos);
    CHECK(end.err.find("cudaErrorIllegalAddress") != std::string::npos);
  }
}

}  // namespace courier_test_gpu_cuda_emulated_cublaslt_emu
