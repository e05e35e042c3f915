// The runtime's C functions for the emulated compile of gpu/cuda (cuda_api.hpp): here the
// runtime's state, the rules every call follows, errors, devices and kernel launches;
// runtime_memory.cpp, runtime_streams.cpp and runtime_graphs.cpp the rest. Library
// courier_cuda_emu_runtime: linked only into binaries without NVIDIA's libcudart, whose
// functions these names are.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "gpu/cuda_emu/runtime_context.hpp"

namespace courier::cuda_emu::rt {

namespace {

// Host functions and kernels run as queued work: the runtime refuses calls from inside them.
thread_local int inside_work = 0;

std::vector<std::string> device_names() {
  const char* env = std::getenv("COURIER_CUDA_EMU_DEVICES");
  std::vector<std::string> names;
  std::stringstream list(env != nullptr ? env : "H100,H100");
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

error code_of(const emu_error& e) {  // "cudaErrorX: why" -> X
  const std::string what = e.what();
  const error code = error_from_name(what.substr(0, what.find(':')));
  if (code == error::unknown) std::fprintf(stderr, "courier cuda emulator: %s\n", e.what());
  return code;
}

}  // namespace

// A bad device list fails every call (cudaErrorInitializationError), said once on stderr: the
// process goes on, so a test that expects devices fails with the reason printed.
context::context() : pinned(std::size_t{1} << 40) {
  try {
    devs = std::make_unique<devices>(device_names());
    if (devs->count() == 0) throw emu_error("COURIER_CUDA_EMU_DEVICES names no device");
    for (int d = 0; d < devs->count(); ++d) {
      dev.push_back(std::make_unique<device_state>(devs->properties(d)));
    }
  } catch (const emu_error& e) {
    init_failure = e.what();
    dev.clear();
    std::fprintf(stderr,
                 "courier cuda emulator: COURIER_CUDA_EMU_DEVICES (comma-separated H100, A100, "
                 "L40S): %s; every CUDA call fails with cudaErrorInitializationError\n",
                 e.what());
  }
}

context& ctx() {
  static context c;
  return c;
}

cudaError_t as_cuda(error e) {
  return static_cast<cudaError_t>(static_cast<int>(e));
}

int current_device() {
  return ctx().devs ? ctx().devs->current() : 0;
}

bool is_device(int device) {
  return ctx().init_failure.empty() && ctx().devs && device >= 0 && device < ctx().devs->count();
}

device_state& device_at(int device) {
  return *ctx().dev[static_cast<std::size_t>(device)];
}

device_state& current() {
  return device_at(current_device());
}

void fail(error e, const std::string& why) {
  throw runtime_error(error_name(e), why);
}

cudaError_t run_call(const std::function<error()>& body, int device) {
  context& c = ctx();
  if (device < 0) device = current_device();
  if (!c.init_failure.empty()) {
    return as_cuda(c.errors.returned(device, error::initialization_error));
  }
  if (inside_work > 0) return as_cuda(c.errors.returned(device, error::not_permitted));
  error e = c.errors.device_error(device);
  if (e == error::success) {
    try {
      e = body();
    } catch (const runtime_error& x) {
      e = error_from_name(x.code);
    } catch (const capture_error& x) {
      e = error_from_name(x.code);
    } catch (const emu_error& x) {
      e = code_of(x);
    } catch (const std::bad_alloc&) {
      e = error::memory_allocation;
    }
  }
  return as_cuda(c.errors.returned(device, e));
}

stream_ref stream_of(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy) return {current_device(), 0};
  std::lock_guard<std::mutex> lock(ctx().handles);
  const auto it = ctx().streams.find(s);
  if (it == ctx().streams.end()) fail(error::invalid_resource_handle, "not a live stream");
  return it->second;
}

stream_mark queue(const stream_ref& s, std::function<void()> work, work_tag tag) {
  return streams_of(s.device).enqueue(
      s.id,
      [work = std::move(work)] {
        struct leave {
          ~leave() { --inside_work; }
        } guard;
        ++inside_work;
        work();
      },
      tag);
}

work_tag copy_tag(cudaMemcpyKind kind, std::size_t bytes) {
  const int k = kind == cudaMemcpyHostToDevice     ? courierEmuCopyHtoD
                : kind == cudaMemcpyDeviceToHost   ? courierEmuCopyDtoH
                : kind == cudaMemcpyDeviceToDevice ? courierEmuCopyDtoD
                                                   : courierEmuCopyHtoH;
  return {k, bytes};
}

// Global mode (the default, and every thread's, as cudaThreadExchangeStreamCaptureMode is not
// emulated): a thread is prohibited by its own capture unless that is Relaxed, and by another
// thread's Global capture.
void unsafe_during_capture(const char* call) {
  std::lock_guard<std::mutex> lock(ctx().handles);
  bool prohibited = false;
  for (const capture_info& c : ctx().captures) {
    const bool mine = c.thread == std::this_thread::get_id();
    if ((mine && c.mode != cudaStreamCaptureModeRelaxed) ||
        (!mine && c.mode == cudaStreamCaptureModeGlobal)) {
      streams_of(c.device).invalidate_capture(c.stream);
      prohibited = true;
    }
  }
  if (prohibited) fail(error::stream_capture_unsupported, std::string(call) + " during capture");
}

}  // namespace courier::cuda_emu::rt

namespace courier::cuda_emu {

void enqueue_launch(cudaStream_t stream, const void* kernel, const launch_config& config,
                    std::function<void()> body) {
  using namespace rt;
  call([&] {
    const stream_ref s = stream_of(stream);
    // A kernel runs on the current device: a stream of another one is not its to use.
    if (s.device != current_device()) fail(error::invalid_resource_handle, "another device's");
    try {
      check_launch_config(config);
    } catch (const emu_error&) {
      fail(error::invalid_configuration);
    }
    ctx().devs->check_launch(kernel, config);
    queue(s,
          [body = std::move(body), config, device = s.device] {
            try {
              run_grid(config, body);
            } catch (const std::exception& e) {
              std::fprintf(stderr, "courier cuda emulator: a kernel failed on device %d: %s\n",
                           device, e.what());
              ctx().errors.returned(device, error::launch_failure);
            }
          },
          {courierEmuKernel, 0});
  });
}

}  // namespace courier::cuda_emu

using namespace courier::cuda_emu;
using namespace courier::cuda_emu::rt;

extern "C" {

cudaError_t cudaGetLastError(void) {
  return as_cuda(ctx().errors.get_last(current_device()));
}

cudaError_t cudaPeekAtLastError(void) {
  const error sticky = ctx().errors.device_error(current_device());
  const error last = ctx().errors.peek_last();
  return as_cuda(last != error::success ? last : sticky);
}

const char* cudaGetErrorString(cudaError_t e) {
  return error_description(static_cast<error>(static_cast<int>(e)));
}

const char* cudaGetErrorName(cudaError_t e) {
  return error_name(static_cast<error>(static_cast<int>(e)));
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count != nullptr) *count = ctx().init_failure.empty() ? ctx().devs->count() : 0;
  return call([&] {
    if (count == nullptr) fail(error::invalid_value);
  });
}

// The device switched to is the one whose sticky error counts: a thread leaves a failed device
// for a sound one.
cudaError_t cudaSetDevice(int device) {
  return call([&] { ctx().devs->set_current(device); }, is_device(device) ? device : -1);
}

cudaError_t cudaGetDevice(int* device) {
  return call([&] {
    if (device == nullptr) fail(error::invalid_value);
    *device = current_device();
  });
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return call([&] {
    if (prop == nullptr) fail(error::invalid_value);
    const device_profile& p = ctx().devs->properties(device);
    *prop = cudaDeviceProp{};
    std::snprintf(prop->name, sizeof prop->name, "NVIDIA %s (courier cuda emulator)",
                  p.name.c_str());
    prop->totalGlobalMem = p.global_memory;
    prop->sharedMemPerBlock = p.shared_per_block;
    prop->maxThreadsPerBlock = 1024;
    prop->major = p.major;
    prop->minor = p.minor;
    prop->multiProcessorCount = p.sm_count;
    prop->sharedMemPerMultiprocessor = p.shared_per_sm;
    prop->sharedMemPerBlockOptin = p.shared_per_block_optin;
  });
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return call([&] {
    if (value == nullptr) fail(error::invalid_value);
    const device_profile& p = ctx().devs->properties(device);
    const std::pair<cudaDeviceAttr, std::size_t> values[] = {
        {cudaDevAttrMaxThreadsPerBlock, 1024},
        {cudaDevAttrMaxBlockDimX, 1024},
        {cudaDevAttrMaxBlockDimY, 1024},
        {cudaDevAttrMaxBlockDimZ, 64},
        {cudaDevAttrMaxGridDimX, 2147483647},
        {cudaDevAttrMaxGridDimY, 65535},
        {cudaDevAttrMaxGridDimZ, 65535},
        {cudaDevAttrWarpSize, warp_size},
        {cudaDevAttrMultiProcessorCount, p.sm_count},
        {cudaDevAttrComputeCapabilityMajor, p.major},
        {cudaDevAttrComputeCapabilityMinor, p.minor},
        {cudaDevAttrMaxSharedMemoryPerBlock, p.shared_per_block},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, p.shared_per_sm},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, p.shared_per_block_optin},
    };
    for (const auto& [a, v] : values) {
      if (a == attr) {
        *value = static_cast<int>(v);
        return;
      }
    }
    fail(error::invalid_value, "attribute not emulated");
  });
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  return call([&] {
    if (func == nullptr) fail(error::invalid_device_function);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
      if (value < 0) fail(error::invalid_value);
      ctx().devs->set_max_dynamic_shared(func, static_cast<std::size_t>(value));
    } else if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) {
      if (value < -1 || value > 100) fail(error::invalid_value);  // a hint: nothing to do
    } else {
      fail(error::invalid_value, "attribute not emulated");
    }
  });
}

cudaError_t cudaDeviceSynchronize(void) {
  return call([&] { current().streams.synchronize_all(); });
}

}  // extern "C"
