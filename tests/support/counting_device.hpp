#pragma once
// A device that counts allocations (and remembers the last workspace reservation) on top of
// another: tests of the memory plan assert that steps allocate nothing once the workspaces are
// reserved.
#include <cstddef>
#include <memory>

#include "gpu/forwarding_device.hpp"

namespace courier::test {

class counting_device final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;

  int num_allocations() const { return num_allocations_; }
  const gpu::workspace_limits& last_limits() const { return last_limits_; }

  gpu::device_buffer allocate(std::size_t size_bytes) override {
    ++num_allocations_;
    return forwarding_device::allocate(size_bytes);
  }
  gpu::device_buffer load_weight(const gpu::host_tensor& t) override {
    ++num_allocations_;
    return forwarding_device::load_weight(t);
  }
  std::size_t reserve_workspace(const gpu::workspace_limits& limits) override {
    last_limits_ = limits;
    return forwarding_device::reserve_workspace(limits);
  }

 private:
  int num_allocations_ = 0;
  gpu::workspace_limits last_limits_;
};

}  // namespace courier::test
