// The emulated runtime's devices against the Runtime API: the device count of the default list
// (two H100s), cudaSetDevice per host thread (cudaErrorInvalidDevice out of range), properties
// and attributes of the current profile, and cudaFuncSetAttribute per function per device: a
// launch with over 48 KB of dynamic shared memory fails (cudaErrorInvalidValue, as
// cudaGetLastError reports it) on a device where the attribute was not set.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <thread>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "tests/gpu/cuda_emulated/leave_clean.hpp"

namespace courier_test_gpu_cuda_emulated_runtime_devices {

namespace emu = courier::cuda_emu;

namespace {

void big_kernel() {}  // its address names the function

using courier::test::emulated::leave_clean;

cudaError_t launch_with_shared(std::size_t bytes, int* runs) {
  emu::launch_config c;
  c.shared_bytes = bytes;
  emu::enqueue_launch(nullptr, reinterpret_cast<const void*>(&big_kernel), c, [runs] { ++*runs; });
  return cudaGetLastError();
}

}  // namespace

TEST_CASE("emulated runtime: two H100s by default; the current device is per host thread",
          "[emulated]") {
  leave_clean clean;
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  REQUIRE(count >= 2);
  int device = -1;  // this thread's may be anything by now: earlier cases set it
  CHECK(cudaSetDevice(1) == cudaSuccess);
  int other = -1, other_after = -1;
  std::thread([&] {
    cudaGetDevice(&other);  // a new host thread starts on device 0
    cudaSetDevice(1);
    cudaSetDevice(0);
    cudaGetDevice(&other_after);
  }).join();
  CHECK(other == 0);
  CHECK(other_after == 0);
  CHECK(cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 1);  // the other thread's cudaSetDevice left this one alone
  CHECK(cudaSetDevice(count) == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 1);
  CHECK(cudaGetDeviceCount(nullptr) == cudaErrorInvalidValue);
}

TEST_CASE("emulated runtime: properties and attributes of the H100 profile", "[emulated]") {
  leave_clean clean;
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, 1) == cudaSuccess);
  CHECK(std::string(p.name).find("H100") != std::string::npos);
  CHECK(p.major == 9);
  CHECK(p.minor == 0);
  CHECK(p.multiProcessorCount == 132);
  CHECK(p.sharedMemPerBlock == 49152);
  CHECK(p.sharedMemPerBlockOptin == 232448);  // 227 KB
  CHECK(p.maxThreadsPerBlock == 1024);
  int v = 0;
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) == cudaSuccess);
  CHECK(v == 232448);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
  CHECK(v == 9);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0) == cudaSuccess);
  CHECK(v == 32);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxGridDimY, 0) == cudaSuccess);
  CHECK(v == 65535);
  CHECK(cudaGetDeviceProperties(&p, 99) == cudaErrorInvalidDevice);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 99) == cudaErrorInvalidDevice);
  std::size_t free = 0, total = 0;
  CHECK(cudaMemGetInfo(&free, &total) == cudaSuccess);
  CHECK(total == std::size_t{80} << 30);
  CHECK(free <= total);
}

TEST_CASE("emulated runtime: MaxDynamicSharedMemorySize is per function and per device",
          "[emulated]") {
  leave_clean clean;
  const auto fn = reinterpret_cast<const void*>(&big_kernel);
  int runs = 0;
  CHECK(launch_with_shared(48 * 1024, &runs) == cudaSuccess);  // needs nothing
  CHECK(launch_with_shared(64 * 1024, &runs) == cudaErrorInvalidValue);
  REQUIRE(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) ==
          cudaSuccess);
  CHECK(launch_with_shared(64 * 1024, &runs) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(runs == 2);  // the refused launch never ran
  // Set on device 0 only: device 1 refuses the same launch.
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  CHECK(launch_with_shared(64 * 1024, &runs) == cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 232448 + 1) ==
        cudaErrorInvalidValue);  // over the H100's opt-in maximum
  CHECK(cudaFuncSetAttribute(nullptr, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024) ==
        cudaErrorInvalidDeviceFunction);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(runs == 2);
}

TEST_CASE("emulated runtime: error names and strings", "[emulated]") {
  CHECK(std::strcmp(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady") == 0);
  CHECK(std::strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0);
  CHECK(std::strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  CHECK(std::strcmp(cudaGetErrorName(static_cast<cudaError_t>(555)), "cudaErrorUnknown") == 0);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_devices
