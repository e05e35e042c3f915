#pragma once
// Penalty lists kept on the device (device::count_penalty_tokens): each sampled token is counted
// into its sequence's list on the GPU, so the next step's sampler sees it without the token
// coming to the host first.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/sampling.hpp"

namespace courier::gpu::cuda {

// For i < n: list l = list_index[i] (the first lens[l] of the `stride` entries at
// lists + l * stride) counts t = tokens[src_index[i]] once more in the output: the entry whose
// token is t gets output_count + 1, or {t, 1, 0} is appended at lens[l] (then lens[l] + 1),
// unless the list is full. One CTA per i; lists are distinct within a launch. All arrays are
// device memory. Errors: cudaErrorInvalidValue for n < 0, stride < 1 or a missing pointer.
[[nodiscard]] cudaError_t launch_count_penalty_tokens(const std::int32_t* tokens,
                                                      const std::int32_t* src_index,
                                                      penalty_token* lists, std::int32_t* lens,
                                                      const std::int32_t* list_index,
                                                      std::int32_t stride, std::int32_t n,
                                                      cudaStream_t stream);

}  // namespace courier::gpu::cuda
