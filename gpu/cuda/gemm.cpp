#include "gpu/cuda/gemm.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpu/cuda/cuda_check.hpp"

namespace courier::gpu::cuda {

namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(fmt::format("cuBLASLt {}: status {}", what, static_cast<int>(s)));
  }
}

}  // namespace

gemm::gemm() {
  check(cublasLtCreate(&handle_), "create");
  CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

gemm::~gemm() {
  for (auto& [key, p] : plans_) {
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.c);
    cublasLtMatmulDescDestroy(p.op);
  }
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

const gemm::plan& gemm::plan_for(std::int64_t m, std::int64_t n, std::int64_t k, bool bias,
                                 bool out_f32) {
  const auto key = std::make_tuple(m, n, k, bias, out_f32);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  plan p;
  check(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
        "transa");
  check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
        "transb");
  if (bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
          "epilogue");
    const cudaDataType_t bt = CUDA_R_16BF;
    check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt),
          "bias type");
  }
  // A = w stored column-major [K, N] (ld K), used transposed; B = x column-major [K, M] (ld K);
  // C = out column-major [N, M] (ld N).
  check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, static_cast<std::uint64_t>(k),
                                   static_cast<std::uint64_t>(n), k),
        "layout a");
  check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, static_cast<std::uint64_t>(k),
                                   static_cast<std::uint64_t>(m), k),
        "layout b");
  check(cublasLtMatrixLayoutCreate(&p.c, out_f32 ? CUDA_R_32F : CUDA_R_16BF,
                                   static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m), n),
        "layout c");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes_, sizeof workspace_bytes_),
        "workspace");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw std::runtime_error(fmt::format("cuBLASLt: no algorithm for bf16 {}x{}x{}", m, n, k));
  }
  p.algo = result.algo;
  return plans_.emplace(key, p).first->second;
}

void gemm::run(const void* x, const void* w, const void* bias, void* out, bool out_f32,
               std::int64_t m, std::int64_t n, std::int64_t k, cudaStream_t stream) {
  const plan& p = plan_for(m, n, k, bias != nullptr, out_f32);
  if (bias) {
    check(
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
        "bias");
  }
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, out, p.c, out, p.c, &p.algo,
                       workspace_, workspace_bytes_, stream),
        "matmul");
}

}  // namespace courier::gpu::cuda
