#pragma once
// One rank's end of a tensor-parallel group: the collectives the ranks' devices take part in,
// which device::all_reduce_sum and device::all_gather_cols enqueue on the device's stream once
// the device has joined the group (device::join_group). Implementations: gpu/sim/
// sim_collectives (the ranks are threads of this process, each with its sim device) and
// gpu/cuda/nccl_collectives (NCCL, one communicator per GPU). Every rank makes the same calls
// in the same order with the same shapes; a rank that fails calls abort() so that none of the
// others waits for it forever.
#include <cstdint>
#include <string>

#include "gpu/tensor.hpp"

namespace courier::gpu {

class collectives {
 public:
  virtual ~collectives() = default;
  virtual std::int32_t rank() const = 0;
  virtual std::int32_t size() const = 0;
  // x [R, C] (the device's compute dtype) becomes the element-wise sum of every rank's x.
  virtual void all_reduce_sum(tensor_view x) = 0;
  // out [R, size() * C] (f32) gets every rank's in [R, C] (f32): rank r's as columns
  // [r * C, (r + 1) * C).
  virtual void all_gather_cols(tensor_view in, tensor_view out) = 0;
  // Every collective waiting now or called later fails (throws, or the device reports the error)
  // with `why`.
  virtual void abort(const std::string& why) = 0;
};

}  // namespace courier::gpu
