#pragma once
// The emulated cuBLASLt's model of a matmul (README.md here): the descriptors' contents, the
// checks cuBLASLt documents for a problem, its algorithms, and the computation
// D = epilogue(alpha * op(A) * op(B) + beta * C). Internal to courier_emu_cublaslt.
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda_emu/libs/emu_lib.hpp"

namespace courier::cuda_emu::libs::lt {

// What a cublasLtMatrixLayout_t holds (constructed in the opaque descriptor's storage).
struct layout {
  cudaDataType type = CUDA_R_32F;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::int32_t batch_count = 1;
  std::int64_t batch_stride = 0;  // elements from one matrix of the batch to the next

  // The element offset of (r, c) of the batch's matrix `b`.
  std::int64_t at(std::uint64_t r, std::uint64_t c, std::int64_t b) const {
    const auto ri = static_cast<std::int64_t>(r), ci = static_cast<std::int64_t>(c);
    return b * batch_stride + (order == CUBLASLT_ORDER_ROW ? ri * ld + ci : ci * ld + ri);
  }
};

// What a cublasLtMatmulDesc_t holds; every attribute's documented default.
struct op_desc {
  std::int32_t compute = CUBLAS_COMPUTE_32F;
  std::int32_t scale = CUDA_R_32F;
  std::int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N, transc = CUBLAS_OP_N;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int64_t bias_stride = 0;
  std::int32_t bias_type = -1;  // -1: D's type
};

struct preference {
  std::uint64_t max_workspace = 0;  // documented default: no workspace allowed
};

// One matmul as described at a call, by value: a call captured into a graph keeps the
// descriptors' contents of that call, whatever the caller changes later.
struct problem {
  op_desc op;
  layout a, b, c, d;
  std::uint64_t m() const { return d.rows; }
  std::uint64_t n() const { return d.cols; }
  std::uint64_t k() const { return op.transa == CUBLAS_OP_N ? a.cols : a.rows; }
};

// The documented rules for a problem (cublasLtMatmul's supported types, layouts, operations):
// CUBLAS_STATUS_SUCCESS, _INVALID_VALUE (a conflict, an impossible layout) or _NOT_SUPPORTED (a
// type combination or feature cuBLASLt, or this emulator, does not run).
cublasStatus_t check(const problem& p);

// The bytes a matrix spans, from its first element to one past its last over the whole batch
// (0 when it has no element): what a GPU reads or writes of it.
std::size_t span_bytes(const layout& l);
// The bytes of the bias the BIAS epilogue reads (0 without it): D's rows, per batch member.
std::size_t bias_span_bytes(const problem& p);

// The emulated algorithms: 0 sums over k in order and needs no workspace; 1 splits k in two
// halves summed apart then added (the split-K kind, results differing in the last bits), and
// needs an f32 partial product of D per batch in its workspace. Heuristic order: 0, 1.
constexpr int kAlgorithms = 2;
bool applicable(int id, const problem& p);
std::size_t workspace_need(int id, const problem& p);
cublasLtMatmulAlgo_t encode_algo(int id);
int decode_algo(const cublasLtMatmulAlgo_t& algo);  // -1: not an algorithm of this library

// The operands of one call. alpha and beta: their values (pointer mode host, read at the call)
// or device pointers (pointer mode device, read when the matmul runs).
struct operands {
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void* d = nullptr;
  float alpha = 0, beta = 0;
  const float *alpha_ptr = nullptr, *beta_ptr = nullptr;
  int algo = 0;
};

// Runs a problem that passed check(): accumulation in f32, D rounded to nearest even.
void compute(const problem& p, const operands& o);

}  // namespace courier::cuda_emu::libs::lt
