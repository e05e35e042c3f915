#pragma once
// The emulator's devices: each a profile of a real GPU (compute capability, SMs, memory and the
// shared-memory limits of NVIDIA's "Technical Specifications per Compute Capability" table and
// the products' data sheets), the current device of each host thread (cudaSetDevice), and the
// per-device function attributes a launch is checked against: dynamic shared memory above 48 KB
// needs cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) on *that* device, and
// never more than the device's opt-in maximum.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cuda_emu/block_runner.hpp"

namespace courier::cuda_emu {

struct device_profile {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int sm_count = 0;
  std::size_t global_memory = 0;
  std::size_t shared_per_block = 48 * 1024;  // without the opt-in
  std::size_t shared_per_block_optin = 0;    // cudaDevAttrMaxSharedMemoryPerBlockOptin
  std::size_t shared_per_sm = 0;
};

// "H100" (SXM5 80 GB, 9.0), "A100" (SXM4 80 GB, 8.0), "L40S" (8.9: 99 KB a block at most, as
// 8.6 and 12.0). Throws emu_error for another name.
const device_profile& profile(const std::string& name);

// Runtime errors as the CUDA runtime names them (cudaError_t's), for the checks below.
struct runtime_error : emu_error {
  runtime_error(const std::string& code, const std::string& what)
      : emu_error(code + ": " + what), code(code) {}
  std::string code;  // e.g. "cudaErrorInvalidValue"
};

class devices {
 public:
  // One device per profile name, ordinals 0, 1, ...
  explicit devices(const std::vector<std::string>& profiles);

  int count() const { return static_cast<int>(devices_.size()); }
  const device_profile& properties(int ordinal) const;

  // cudaSetDevice / cudaGetDevice: per host thread, 0 until set.
  void set_current(int ordinal);
  int current() const;

  // cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) on the current
  // device: more than its opt-in maximum is cudaErrorInvalidValue.
  void set_max_dynamic_shared(const void* fn, std::size_t bytes);

  // The check of a launch of `fn` on the current device, before it is queued: dynamic shared
  // memory over 48 KB without the attribute set on this device for fn, or over the attribute,
  // is cudaErrorInvalidValue (the runtime's "invalid argument" for such a launch).
  void check_launch(const void* fn, const launch_config& config) const;
  // check_launch, then run_grid at once.
  void launch(const void* fn, const launch_config& config, const std::function<void()>& body);

 private:
  struct device {
    device_profile profile;
    std::map<const void*, std::size_t> max_dynamic_shared;  // per function
  };
  device& current_device();
  const device& current_device() const;

  mutable std::mutex mutex_;
  std::vector<device> devices_;
};

}  // namespace courier::cuda_emu
