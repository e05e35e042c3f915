#pragma once
// CUDA graphs for gpu::device::capture: stream capture of the ops a body enqueues, instantiated
// once and launched on the same stream by replay().
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>

#include "gpu/device.hpp"

namespace courier::gpu::cuda {

// Captures what `body` enqueues on `stream` (thread-local capture mode: other threads' CUDA calls
// are not affected). If body throws, or an op cannot be captured, the capture is ended, nothing
// is kept, and the error is thrown (std::runtime_error through CUDA_CHECK).
std::unique_ptr<device_graph> capture_graph(cudaStream_t stream, const std::function<void()>& body);

}  // namespace courier::gpu::cuda
