// cuBLASLt, loaded on first use. Linking libcublasLt runs its static initialisers in every
// process that starts: about 0.45 s of CPU and 200 MB of resident pages, paid by each `courier`
// command and each test process although only a CUDA gemm calls it. The functions gemm.cpp calls
// are defined here with cublasLt.h's exact signatures (a mismatch does not compile: two C
// functions cannot overload); the first call dlopens the library and each forwards to the real
// function. Without the library a call answers CUBLAS_STATUS_NOT_INITIALIZED, which gemm reports.
#include <cublasLt.h>

#include "gpu/cuda/lazy_library.hpp"

namespace {

void* library() {
  static void* const handle = courier::gpu::cuda::detail::open_library(COURIER_CUBLASLT_SONAME, COURIER_CUBLASLT_PATH);
  return handle;
}

template <typename F>
F* resolve(const char* name) {
  return courier::gpu::cuda::detail::symbol<F>(library(), name);
}

}  // namespace

#define COURIER_CUBLASLT_FORWARD(name, params, args)                   \
  extern "C" cublasStatus_t CUBLASWINAPI name params {                \
    static decltype(name)* const fn = resolve<decltype(name)>(#name); \
    return fn == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : fn args;   \
  }

COURIER_CUBLASLT_FORWARD(cublasLtCreate, (cublasLtHandle_t * handle), (handle))
COURIER_CUBLASLT_FORWARD(cublasLtDestroy, (cublasLtHandle_t handle), (handle))
COURIER_CUBLASLT_FORWARD(cublasLtMatmul,
                         (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                          const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                          cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                          cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                          const cublasLtMatmulAlgo_t* algo, void* workspace,
                          size_t workspace_bytes, cudaStream_t stream),
                         (handle, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc,
                          algo, workspace, workspace_bytes, stream))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulAlgoCheck,
                         (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                          cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                          cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                          const cublasLtMatmulAlgo_t* algo,
                          cublasLtMatmulHeuristicResult_t* result),
                         (handle, desc, a_desc, b_desc, c_desc, d_desc, algo, result))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
                         (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                          cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                          cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                          cublasLtMatmulPreference_t preference, int requested,
                          cublasLtMatmulHeuristicResult_t results[], int* returned),
                         (handle, desc, a_desc, b_desc, c_desc, d_desc, preference, requested,
                          results, returned))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulDescCreate,
                         (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute,
                          cudaDataType_t scale),
                         (desc, compute, scale))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute,
                         (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                          const void* buf, size_t size),
                         (desc, attr, buf, size))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref),
                         (pref))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref),
                         (pref))
COURIER_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
                         (cublasLtMatmulPreference_t pref,
                          cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                          size_t size),
                         (pref, attr, buf, size))
COURIER_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate,
                         (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows,
                          uint64_t cols, int64_t ld),
                         (layout, type, rows, cols, ld))
COURIER_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
