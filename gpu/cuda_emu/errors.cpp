#include "gpu/cuda_emu/errors.hpp"

#include <unordered_map>

namespace courier::cuda_emu {

namespace {

// Each host thread's last error, per error_state (a test may make several).
thread_local std::unordered_map<const error_state*, error> last_errors;

}  // namespace

const char* error_name(error e) {
  switch (e) {
    case error::success: return "cudaSuccess";
    case error::invalid_value: return "cudaErrorInvalidValue";
    case error::memory_allocation: return "cudaErrorMemoryAllocation";
    case error::invalid_configuration: return "cudaErrorInvalidConfiguration";
    case error::invalid_device: return "cudaErrorInvalidDevice";
    case error::invalid_resource_handle: return "cudaErrorInvalidResourceHandle";
    case error::not_ready: return "cudaErrorNotReady";
    case error::illegal_address: return "cudaErrorIllegalAddress";
    case error::launch_failure: return "cudaErrorLaunchFailure";
    case error::stream_capture_unsupported: return "cudaErrorStreamCaptureUnsupported";
    case error::stream_capture_invalidated: return "cudaErrorStreamCaptureInvalidated";
  }
  return "cudaErrorUnknown";
}

bool is_sticky(error e) { return e == error::illegal_address || e == error::launch_failure; }

error error_state::returned(int device, error e) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = sticky_.find(device);
  if (it != sticky_.end()) e = it->second;  // the device is unusable from here on
  if (is_sticky(e)) sticky_.emplace(device, e);
  if (e != error::success) last_errors[this] = e;
  return e;
}

error error_state::device_error(int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = sticky_.find(device);
  return it == sticky_.end() ? error::success : it->second;
}

error error_state::get_last(int device) {
  const error sticky = device_error(device);
  const auto it = last_errors.find(this);
  const error e = it == last_errors.end() ? error::success : it->second;
  if (it != last_errors.end() && sticky == error::success) last_errors.erase(it);
  return e != error::success ? e : sticky;
}

error error_state::peek_last() const {
  const auto it = last_errors.find(this);
  return it == last_errors.end() ? error::success : it->second;
}

}  // namespace courier::cuda_emu
