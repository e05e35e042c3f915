#pragma once
// out[M, N] = x[M, K] * w[N, K]^T (+ bias[N]) from bf16 with f32 accumulation, through cuBLASLt.
// Row-major x and w are column-major x^T and w^T, so this is C^T = w * x^T with A = w (op T),
// B = x (op N), C = out, all column-major, and cuBLASLt's BIAS epilogue adds bias per row of C^T.
// Heuristic results are cached per (M, N, K, bias, output type); the workspace is allocated once.
//
// Note: cuBLASLt may pick a different algorithm (and split of K) for another M, so unlike the sim
// backend a row's result can differ in the last bits with the batch it is in.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace courier::gpu::cuda {

class gemm {
 public:
  gemm();
  ~gemm();
  gemm(const gemm&) = delete;
  gemm& operator=(const gemm&) = delete;

  // x, w, bias (nullable): bf16 device pointers; out: bf16, or f32 when out_f32 (logits).
  void run(const void* x, const void* w, const void* bias, void* out, bool out_f32, std::int64_t m,
           std::int64_t n, std::int64_t k, cudaStream_t stream);

 private:
  struct plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  const plan& plan_for(std::int64_t m, std::int64_t n, std::int64_t k, bool bias, bool out_f32);

  cublasLtHandle_t handle_ = nullptr;  // Owned.
  void* workspace_ = nullptr;          // Owned, device memory.
  std::size_t workspace_bytes_ = 32u << 20;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, bool>, plan> plans_;
};

}  // namespace courier::gpu::cuda
