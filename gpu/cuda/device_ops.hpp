#pragma once
// The CUDA device's ops that need planning and a workspace: attention (plan per batch shape) and
// sampling (per-row parameters uploaded, results downloaded). reserve() sizes every workspace at
// start from the engine's limits, so no step within them allocates; a larger step grows them.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "gpu/device.hpp"

namespace courier::gpu::cuda {

class device_ops {
 public:
  explicit device_ops(int num_sms) : num_sms_(num_sms) {}
  ~device_ops();
  device_ops(const device_ops&) = delete;
  device_ops& operator=(const device_ops&) = delete;

  // Allocates the attention and sampling workspaces for any step within `limits`; returns the
  // bytes held.
  std::size_t reserve(const workspace_limits& limits);
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out, cudaStream_t stream);
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch,
                                    cudaStream_t stream);

 private:
  // A device allocation that only grows (freed at destruction).
  struct scratch {
    void* data = nullptr;
    std::size_t bytes = 0;
    void* at_least(std::size_t n);
    ~scratch();
  };

  int num_sms_;
  scratch attention_ws_;
  scratch sampling_ws_, sampling_rows_, sampling_penalties_, sampling_out_;
};

}  // namespace courier::gpu::cuda
