#include "gpu/cuda_emu/errors.hpp"

#include <unordered_map>

namespace courier::cuda_emu {

namespace {

// Each host thread's last error, per error_state (a test may make several).
thread_local std::unordered_map<const error_state*, error> last_errors;

struct error_text {
  error code;
  const char* name;
  const char* description;  // as cudaGetErrorString words it
};

// Every code the emulator returns, with the runtime's names and descriptions.
const error_text texts[] = {
    {error::success, "cudaSuccess", "no error"},
    {error::invalid_value, "cudaErrorInvalidValue", "invalid argument"},
    {error::memory_allocation, "cudaErrorMemoryAllocation", "out of memory"},
    {error::initialization_error, "cudaErrorInitializationError", "initialization error"},
    {error::invalid_configuration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {error::invalid_pitch_value, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {error::invalid_memcpy_direction, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {error::invalid_device_function, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {error::no_device, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {error::invalid_device, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {error::invalid_resource_handle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {error::illegal_state, "cudaErrorIllegalState",
     "the operation cannot be performed in the "
     "present state"},
    {error::not_ready, "cudaErrorNotReady", "device not ready"},
    {error::illegal_address, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {error::launch_failure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {error::not_permitted, "cudaErrorNotPermitted", "operation not permitted"},
    {error::not_supported, "cudaErrorNotSupported", "operation not supported"},
    {error::stream_capture_unsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {error::stream_capture_invalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {error::stream_capture_isolation, "cudaErrorStreamCaptureIsolation",
     "dependency created on uncaptured work in another stream"},
    {error::stream_capture_implicit, "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {error::captured_event, "cudaErrorCapturedEvent",
     "operation not permitted on an event last recorded in a capturing stream"},
    {error::stream_capture_wrong_thread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {error::unknown, "cudaErrorUnknown", "unknown error"},
};

const error_text& text_of(error e) {
  for (const error_text& t : texts) {
    if (t.code == e) return t;
  }
  return texts[sizeof texts / sizeof texts[0] - 1];  // cudaErrorUnknown
}

}  // namespace

const char* error_name(error e) {
  return text_of(e).name;
}

const char* error_description(error e) {
  return text_of(e).description;
}

error error_from_name(const std::string& name) {
  for (const error_text& t : texts) {
    if (name == t.name) return t.code;
  }
  return error::unknown;
}

bool is_sticky(error e) {
  return e == error::illegal_address || e == error::launch_failure;
}

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
