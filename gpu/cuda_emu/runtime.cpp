// The runtime's C functions for the emulated compile of gpu/cuda (cuda_api.hpp), on the
// emulator's parts: one device of the H100 profile, its streams (the legacy stream for now), its
// error state. Library courier_cuda_emu_runtime: linked only into binaries without NVIDIA's
// libcudart, whose functions these names are.
#include <cstdio>
#include <memory>
#include <mutex>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "gpu/cuda_emu/device.hpp"
#include "gpu/cuda_emu/errors.hpp"
#include "gpu/cuda_emu/streams.hpp"

namespace courier::cuda_emu {

namespace {

struct context {
  devices devs{{"H100"}};
  error_state errors;
  std::mutex mutex;  // the streams are not thread-safe; the runtime's calls are
  stream_set streams;
};

context& ctx() {
  static context c;
  return c;
}

cudaError_t as_cuda(error e) { return static_cast<cudaError_t>(static_cast<int>(e)); }

cudaError_t returned(error e) { return as_cuda(ctx().errors.returned(ctx().devs.current(), e)); }

}  // namespace

void enqueue_launch(cudaStream_t stream, const void* kernel, const launch_config& config,
                    std::function<void()> body) {
  context& c = ctx();
  const int device = c.devs.current();
  if (c.errors.device_error(device) != error::success) {
    returned(error::success);  // the sticky error, again
    return;
  }
  if (stream != nullptr) {  // only the legacy stream is emulated so far
    returned(error::invalid_resource_handle);
    return;
  }
  try {
    check_launch_config(config);
  } catch (const emu_error& e) {
    returned(error::invalid_configuration);
    return;
  }
  (void)kernel;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.streams.enqueue(0, [body = std::move(body), config, device] {
    try {
      run_grid(config, body);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "courier cuda emulator: a kernel failed: %s\n", e.what());
      ctx().errors.returned(device, error::launch_failure);
    }
  });
}

}  // namespace courier::cuda_emu

using courier::cuda_emu::ctx;
using courier::cuda_emu::error;

extern "C" {

cudaError_t cudaGetLastError(void) {
  return courier::cuda_emu::as_cuda(ctx().errors.get_last(ctx().devs.current()));
}

cudaError_t cudaPeekAtLastError(void) {
  return courier::cuda_emu::as_cuda(ctx().errors.peek_last());
}

const char* cudaGetErrorString(cudaError_t e) {
  return courier::cuda_emu::error_name(static_cast<error>(static_cast<int>(e)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (stream != nullptr) return courier::cuda_emu::returned(error::invalid_resource_handle);
  {
    std::lock_guard<std::mutex> lock(ctx().mutex);
    ctx().streams.synchronize(0);
  }
  return courier::cuda_emu::returned(ctx().errors.device_error(ctx().devs.current()));
}

cudaError_t cudaDeviceSynchronize(void) {
  {
    std::lock_guard<std::mutex> lock(ctx().mutex);
    ctx().streams.synchronize_all();
  }
  return courier::cuda_emu::returned(ctx().errors.device_error(ctx().devs.current()));
}

}  // extern "C"
