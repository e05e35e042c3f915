#pragma once
// CUDA_CHECK: turns a failed CUDA runtime call into std::runtime_error naming the file, the line,
// the call and cudaGetErrorString. has_device(): whether this process can see a GPU.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace courier::gpu::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file,
                                          int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " +
                           cudaGetErrorString(err));
}

// True when cudaGetDeviceCount succeeds with at least one device. The failed query's error is
// cleared so that it does not surface in a later cudaGetLastError().
inline bool has_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count >= 1;
}

}  // namespace courier::gpu::cuda

#define CUDA_CHECK(expr)                                                                          \
  do {                                                                                            \
    const cudaError_t courier_cuda_check_err_ = (expr);                                           \
    if (courier_cuda_check_err_ != cudaSuccess) {                                                 \
      ::courier::gpu::cuda::throw_cuda_error(courier_cuda_check_err_, #expr, __FILE__, __LINE__); \
    }                                                                                             \
  } while (0)
