#pragma once
// The CUDA device's ops that need planning and a workspace: attention (planned once per step, the
// plan and tile list kept for every layer's call) and
// sampling (per-row parameters uploaded, results downloaded). reserve() sizes every workspace at
// start from the engine's limits, so no step within them allocates; a larger step grows them.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "gpu/cuda/host_staging.hpp"
#include "gpu/cuda/kernels/attention.hpp"
#include "gpu/device.hpp"
#include "gpu/planned_attention.hpp"

namespace courier::gpu::cuda {

class device_ops {
 public:
  // uploads: where the sampling rows go up from (outlives this).
  device_ops(int ordinal, int num_sms, upload_ring& uploads)
      : ordinal_(ordinal), num_sms_(num_sms), uploads_(uploads),
        results_(std::make_shared<pinned_pool>()) {}
  ~device_ops();
  device_ops(const device_ops&) = delete;
  device_ops& operator=(const device_ops&) = delete;

  // Allocates the attention and sampling workspaces for any step within `limits`; returns the
  // bytes held.
  std::size_t reserve(const workspace_limits& limits);
  // Plans the step's attention on the host (split-K from the sizes and SM count), sizes the
  // workspace for it and enqueues the tile list's kernel; attention() then only launches.
  void plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                      std::int32_t num_kv_heads, std::int32_t head_dim, cudaStream_t stream);
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out, cudaStream_t stream);
  // Enqueues the sampling, its results' copy to pinned memory and an event; never waits.
  std::shared_ptr<pending_samples> sample_async(tensor_view logits, const sampling_batch& batch,
                                                std::int32_t* tokens_out, cudaStream_t stream);

 private:
  // A device allocation that only grows (freed at destruction).
  struct scratch {
    void* data = nullptr;
    std::size_t bytes = 0;
    void* at_least(std::size_t n);
    ~scratch();
  };

  int ordinal_;
  int num_sms_;
  upload_ring& uploads_;                  // Borrowed.
  std::shared_ptr<pinned_pool> results_;  // shared with the pending samples holding its blocks
  scratch attention_ws_;
  attention_plan plan_;         // the step's, from plan_attention
  planned_attention planned_;   // what it was made for
  scratch sampling_ws_, sampling_rows_, sampling_penalties_, sampling_bias_, sampling_mask_,
      sampling_ends_, sampling_out_;
};

}  // namespace courier::gpu::cuda
