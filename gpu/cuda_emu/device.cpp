#include "gpu/cuda_emu/device.hpp"

namespace courier::cuda_emu {

namespace {

constexpr std::size_t kib = 1024;
constexpr std::size_t gib = std::size_t{1} << 30;

// Shared memory per block with the opt-in and per SM: the Programming Guide's table for compute
// capabilities 8.0 (163 KB / 164 KB), 8.9 (99 KB / 100 KB) and 9.0 (227 KB / 228 KB). SM counts
// and memory: H100 SXM5 (132 SMs, 80 GB), A100 SXM4 80 GB (108 SMs), L40S (142 SMs, 48 GB).
const std::vector<device_profile>& all_profiles() {
  static const std::vector<device_profile> p = {
      {"H100", 9, 0, 132, 80 * gib, 48 * kib, 227 * kib, 228 * kib},
      {"A100", 8, 0, 108, 80 * gib, 48 * kib, 163 * kib, 164 * kib},
      {"L40S", 8, 9, 142, 48 * gib, 48 * kib, 99 * kib, 100 * kib},
  };
  return p;
}

thread_local int current_ordinal = 0;

}  // namespace

const device_profile& profile(const std::string& name) {
  for (const device_profile& p : all_profiles()) {
    if (p.name == name) return p;
  }
  throw emu_error("no emulated device profile '" + name + "' (H100, A100, L40S)");
}

devices::devices(const std::vector<std::string>& profiles) {
  for (const std::string& name : profiles) devices_.push_back({profile(name), {}});
}

const device_profile& devices::properties(int ordinal) const {
  if (ordinal < 0 || ordinal >= count()) {
    throw runtime_error("cudaErrorInvalidDevice", "no device " + std::to_string(ordinal));
  }
  return devices_[static_cast<std::size_t>(ordinal)].profile;
}

void devices::set_current(int ordinal) {
  properties(ordinal);  // checks it
  current_ordinal = ordinal;
}

int devices::current() const {
  return current_ordinal;
}

devices::device& devices::current_device() {
  properties(current_ordinal);
  return devices_[static_cast<std::size_t>(current_ordinal)];
}

const devices::device& devices::current_device() const {
  return const_cast<devices*>(this)->current_device();
}

void devices::set_max_dynamic_shared(const void* fn, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  device& d = current_device();
  if (bytes > d.profile.shared_per_block_optin) {
    throw runtime_error("cudaErrorInvalidValue",
                        "cudaFuncSetAttribute: " + std::to_string(bytes) +
                            " bytes of dynamic shared memory, over " + d.profile.name +
                            "'s opt-in maximum of " +
                            std::to_string(d.profile.shared_per_block_optin));
  }
  d.max_dynamic_shared[fn] = bytes;
}

void devices::check_launch(const void* fn, const launch_config& config) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const device& d = current_device();
  if (config.shared_bytes <= d.profile.shared_per_block) return;
  const auto it = d.max_dynamic_shared.find(fn);
  const std::size_t allowed = it == d.max_dynamic_shared.end() ? 0 : it->second;
  if (allowed >= config.shared_bytes) return;
  throw runtime_error(
      "cudaErrorInvalidValue",
      "a launch with " + std::to_string(config.shared_bytes) +
          " bytes of dynamic shared memory on device " + std::to_string(current_ordinal) + " (" +
          d.profile.name +
          "): over 48 KB needs cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) "
          "for this function on this device" +
          (it == d.max_dynamic_shared.end() ? " (never set here)"
                                            : " (set to " + std::to_string(allowed) + ")"));
}

void devices::launch(const void* fn, const launch_config& config,
                     const std::function<void()>& body) {
  check_launch(fn, config);
  run_grid(config, body);
}

}  // namespace courier::cuda_emu
