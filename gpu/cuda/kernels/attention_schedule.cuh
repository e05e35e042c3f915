#pragma once
// Internal to the attention kernels: the schedule kernel's launch (attention_schedule.cu), the
// kernel of launch_attention_plan, run once per step.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace courier::gpu::cuda::detail {

// One CTA of kScheduleThreads writes tile_starts [num_tokens + 1] and num_tiles [1] (device
// memory) from token_seq [num_tokens]; returns the launch status.
[[nodiscard]] cudaError_t launch_attention_schedule(const std::int32_t* token_seq, int num_tokens,
                                                    int tokens_per_tile, std::int32_t* tile_starts,
                                                    std::int32_t* num_tiles, cudaStream_t stream);

}  // namespace courier::gpu::cuda::detail
