#pragma once
// The runtime's error state, after the Runtime API's error handling: every failing call sets its
// host thread's last error (a query's cudaErrorNotReady included); cudaGetLastError returns it
// and resets it to cudaSuccess, cudaPeekAtLastError returns it alone. A sticky error (an illegal
// address or a failure inside a kernel: "the process must be terminated and relaunched") stays
// with its device for good: every later call there returns it, and resetting does not clear it.
#include <map>
#include <mutex>

namespace courier::cuda_emu {

// cudaError_t, numbered as the Runtime API numbers them.
enum class error : int {
  success = 0,
  invalid_value = 1,
  memory_allocation = 2,
  invalid_configuration = 9,
  invalid_device = 101,
  invalid_resource_handle = 400,
  not_ready = 600,
  illegal_address = 700,
  launch_failure = 719,
  stream_capture_unsupported = 900,
  stream_capture_invalidated = 901,
};

const char* error_name(error e);  // "cudaErrorInvalidValue"
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
