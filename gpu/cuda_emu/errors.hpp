#pragma once
// The runtime's error state, after the Runtime API's error handling: every failing call sets its
// host thread's last error (a query's cudaErrorNotReady included); cudaGetLastError returns it
// and resets it to cudaSuccess, cudaPeekAtLastError returns it alone. A sticky error (an illegal
// address or a failure inside a kernel: "the process must be terminated and relaunched") stays
// with its device for good: every later call there returns it, and resetting does not clear it.
#include <map>
#include <mutex>
#include <string>

namespace courier::cuda_emu {

// cudaError_t, numbered as the Runtime API numbers them.
enum class error : int {
  success = 0,
  invalid_value = 1,
  memory_allocation = 2,
  initialization_error = 3,
  invalid_configuration = 9,
  invalid_pitch_value = 12,
  invalid_memcpy_direction = 21,
  invalid_device_function = 98,
  no_device = 100,
  invalid_device = 101,
  invalid_resource_handle = 400,
  illegal_state = 401,
  not_ready = 600,
  illegal_address = 700,
  launch_failure = 719,
  not_permitted = 800,
  not_supported = 801,
  stream_capture_unsupported = 900,
  stream_capture_invalidated = 901,
  stream_capture_isolation = 905,
  stream_capture_implicit = 906,
  captured_event = 907,
  stream_capture_wrong_thread = 908,
  unknown = 999,
};

const char* error_name(error e);  // "cudaErrorInvalidValue"; "cudaErrorUnknown" for others
// The error a name stands for (the codes emu_error subclasses carry); unknown for others.
error error_from_name(const std::string& name);
// cudaGetErrorString's text: the runtime's description of each code.
const char* error_description(error e);
bool is_sticky(error e);

class error_state {
 public:
  // A call on `device` returned `e`: the calling thread's last error (unless success); a sticky
  // one becomes the device's too. Returns what the call returns: the device's sticky error once
  // it has one.
  error returned(int device, error e);
  // What a call on `device` returns before doing anything: its sticky error, or success.
  error device_error(int device) const;
  // cudaGetLastError: the thread's last error, reset to success unless it is its device's
  // sticky error (`device`: the thread's current device).
  error get_last(int device);
  // cudaPeekAtLastError: the same, never reset.
  error peek_last() const;

 private:
  mutable std::mutex mutex_;
  std::map<int, error> sticky_;  // per device
};

}  // namespace courier::cuda_emu
