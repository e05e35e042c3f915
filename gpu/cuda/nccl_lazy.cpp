// NCCL, loaded on first use, as cuBLASLt is (cublaslt_lazy.cpp): libnccl is 218 MB, and linked
// it would be mapped by every process that starts, although only tensor parallelism on several
// GPUs calls it. The functions nccl_collectives.cpp calls are defined here with nccl.h's exact
// signatures; the first call dlopens the library and each forwards to the real function.
// Without the library a call answers ncclSystemError, which nccl_collectives reports.
#include <nccl.h>

#include "gpu/cuda/lazy_library.hpp"

namespace {

void* library() {
  static void* const handle = courier::gpu::cuda::detail::open_library(COURIER_NCCL_SONAME, COURIER_NCCL_PATH);
  return handle;
}

template <typename F>
F* resolve(const char* name) {
  return courier::gpu::cuda::detail::symbol<F>(library(), name);
}

}  // namespace

#define COURIER_NCCL_FORWARD(name, params, args)                      \
  extern "C" ncclResult_t name params {                               \
    static decltype(name)* const fn = resolve<decltype(name)>(#name); \
    return fn == nullptr ? ncclSystemError : fn args;                 \
  }

COURIER_NCCL_FORWARD(ncclCommInitAll, (ncclComm_t * comm, int ndev, const int* devlist),
                     (comm, ndev, devlist))
COURIER_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
COURIER_NCCL_FORWARD(ncclCommAbort, (ncclComm_t comm), (comm))
COURIER_NCCL_FORWARD(ncclAllReduce,
                     (const void* sendbuff, void* recvbuff, size_t count,
                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, datatype, op, comm, stream))
COURIER_NCCL_FORWARD(ncclAllGather,
                     (const void* sendbuff, void* recvbuff, size_t sendcount,
                      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream),
                     (sendbuff, recvbuff, sendcount, datatype, comm, stream))

extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  static decltype(ncclGetErrorString)* const fn =
      resolve<decltype(ncclGetErrorString)>("ncclGetErrorString");
  return fn == nullptr ? "NCCL could not be loaded (libnccl.so.2)" : fn(result);
}
