// What a process's runtime is made of, each in a child process of this binary (the device list
// is read once per process, and a sticky error stays with its device for good): the profiles
// COURIER_CUDA_EMU_DEVICES names (the L40S's opt-in maximum of 101,376 bytes), a name that is
// no profile (every call fails with cudaErrorInitializationError), and a kernel that fails as
// it runs (a sticky cudaErrorLaunchFailure that cudaGetLastError does not reset, returned by
// every later call on that device, not on the other).
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda_emu/cuda_api.hpp"

extern char** environ;

namespace courier_test_gpu_cuda_emulated_runtime_process {

namespace emu = courier::cuda_emu;

namespace {

// Runs this binary's hidden test `tag` with COURIER_CUDA_EMU_DEVICES=`devices`: its exit code
// (Catch's count of failed assertions).
int run_child(const std::string& tag, const std::string& devices) {
  std::vector<std::string> env{"COURIER_CUDA_EMU_DEVICES=" + devices, "COURIER_EMU_TEST_CHILD=1"};
  for (char** e = environ; *e != nullptr; ++e) {
    const bool ours = std::strncmp(*e, "COURIER_CUDA_EMU_DEVICES=", 25) == 0 ||
                      std::strncmp(*e, "COURIER_EMU_TEST_CHILD=", 23) == 0;
    if (!ours) env.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", spec = tag;
  char* argv[] = {exe.data(), spec.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void failing() {}

// The child tests are hidden, but a filter of exclusions alone selects hidden tests too: they do
// nothing outside a child (a sticky error would break every later test of the parent).
bool in_child() {
  return std::getenv("COURIER_EMU_TEST_CHILD") != nullptr;
}

}  // namespace

TEST_CASE("emulated runtime: COURIER_CUDA_EMU_DEVICES picks the profiles", "[emulated]") {
  CHECK(run_child("[emu_child_profiles]", "L40S,A100") == 0);
  CHECK(run_child("[emu_child_bad_name]", "H100,V100") == 0);
  CHECK(run_child("[emu_child_sticky]", "H100,H100") == 0);
  CHECK(run_child("[emu_child_replay_freed]", "H100") == 0);
}

// A GPU faults on memory that is no longer allocated (cudaErrorIllegalAddress, sticky): a graph
// replaying a copy whose buffer was freed after capture.
TEST_CASE("child: a graph replays a copy into freed memory", "[.][emu_child_replay_freed]") {
  if (!in_child()) return;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  void *a = nullptr, *b = nullptr;
  REQUIRE(cudaMalloc(&a, 64) == cudaSuccess);
  REQUIRE(cudaMalloc(&b, 64) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(b, a, 64, cudaMemcpyDeviceToDevice, s) == cudaSuccess);
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &g) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  CHECK(cudaStreamSynchronize(s) == cudaSuccess);  // both alive: fine
  REQUIRE(cudaFree(a) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  CHECK(cudaStreamSynchronize(s) == cudaErrorIllegalAddress);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);  // sticky: not reset
  CHECK(cudaMemset(b, 0, 64) == cudaErrorIllegalAddress);
}

TEST_CASE("child: an L40S and an A100", "[.][emu_child_profiles]") {
  if (!in_child()) return;
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(count == 2);
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  CHECK(p.major == 8);
  CHECK(p.minor == 9);
  CHECK(p.sharedMemPerBlockOptin == 101376);
  int v = 0;
  REQUIRE(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 1) == cudaSuccess);
  CHECK(v == 166912);  // the A100's 163 KB
  const auto fn = reinterpret_cast<const void*>(&failing);
  CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 101377) ==
        cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 101376) ==
        cudaSuccess);
}

TEST_CASE("child: a name that is no profile", "[.][emu_child_bad_name]") {
  if (!in_child()) return;
  int count = -1;
  CHECK(cudaGetDeviceCount(&count) == cudaErrorInitializationError);
  CHECK(count == 0);
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 16) == cudaErrorInitializationError);
}

TEST_CASE("child: a kernel that fails leaves its device a sticky error", "[.][emu_child_sticky]") {
  if (!in_child()) return;
  emu::enqueue_launch(nullptr, reinterpret_cast<const void*>(&failing), emu::launch_config{},
                      [] { throw std::runtime_error("an illegal access, say"); });
  REQUIRE(cudaGetLastError() == cudaSuccess);  // the launch itself was fine
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);  // not reset
  CHECK(cudaPeekAtLastError() == cudaErrorLaunchFailure);
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 16) == cudaErrorLaunchFailure);
  int device = -1;
  CHECK(cudaGetDevice(&device) == cudaErrorLaunchFailure);
  // Device 1 is unaffected; device 0 stays failed.
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);  // the thread's, from before
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaMalloc(&p, 16) == cudaSuccess);
  CHECK(cudaFree(p) == cudaSuccess);
  CHECK(cudaSetDevice(0) == cudaErrorLaunchFailure);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_process
