#pragma once
// Every kernel launch of gpu/cuda goes through launch_kernel: the triple-chevron launch under
// nvcc; in the emulator's compile of these sources (COURIER_CUDA_EMULATED, gpu/cuda_emu) the
// emulator's launch, which checks the configuration now and queues the kernel on the stream.
// The arguments are converted to the kernel's parameter types and copied at the launch, as a
// launch copies them. A launch's error is then cudaGetLastError's, as after <<<...>>>.
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace courier::gpu::cuda::detail {

template <class... P, class... A>
inline void launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t shared,
                          cudaStream_t stream, A&&... args) {
#ifdef COURIER_CUDA_EMULATED
  ::courier::cuda_emu::launch_config c;
  c.grid = {grid.x, grid.y, grid.z};
  c.block = {block.x, block.y, block.z};
  c.shared_bytes = shared;
  std::tuple<std::decay_t<P>...> copied(static_cast<P>(std::forward<A>(args))...);
  ::courier::cuda_emu::enqueue_launch(stream, reinterpret_cast<const void*>(kernel), c,
                                      [kernel, copied] { std::apply(kernel, copied); });
#else
  kernel<<<grid, block, shared, stream>>>(std::forward<A>(args)...);
#endif
}

}  // namespace courier::gpu::cuda::detail
