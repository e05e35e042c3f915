// The emulated runtime's stream capture and graphs against the Programming Guide's "CUDA
// Graphs": captured work is recorded with its arguments, not run, and each graph launch replays
// it; the calls the Guide prohibits during capture fail and invalidate it (synchronizing or
// querying the capturing stream or the device, the legacy stream while a blocking stream
// captures, a potentially unsafe call such as cudaMalloc in the Global and ThreadLocal modes),
// and a ThreadLocal capture ends only on the thread that began it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "tests/gpu/cuda_emulated/leave_clean.hpp"

namespace courier_test_gpu_cuda_emulated_runtime_graphs {

namespace emu = courier::cuda_emu;

namespace {

using courier::test::emulated::leave_clean;

void store() {}

void launch_store(cudaStream_t s, std::uint32_t* dst, std::uint32_t value) {
  emu::enqueue_launch(s, reinterpret_cast<const void*>(&store), emu::launch_config{},
                      [dst, value] { *dst += value; });
}

// A capture of `s` that `refused` breaks: the call fails with `code`, the capture's end with
// cudaErrorStreamCaptureInvalidated.
template <class F>
void check_invalidates(cudaStream_t s, cudaStreamCaptureMode mode, cudaError_t code, F refused) {
  REQUIRE(cudaStreamBeginCapture(s, mode) == cudaSuccess);
  CHECK(refused() == code);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusInvalidated);
  cudaGraph_t g = nullptr;
  CHECK(cudaStreamEndCapture(s, &g) == cudaErrorStreamCaptureInvalidated);
  CHECK(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusNone);
}

}  // namespace

TEST_CASE("emulated runtime: a captured launch and copy replay with their captured arguments",
          "[emulated]") {
  leave_clean clean;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  std::uint32_t* d = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d), 4) == cudaSuccess);
  REQUIRE(cudaMemset(d, 0, 4) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::uint32_t out = 0, add = 5;
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  launch_store(s, d, add);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(&out, d, 4, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  add = 100;  // the launch captured 5
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(out == 0);  // recorded, never run
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(out == 5);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  CHECK(out == 5);  // queued, not yet run
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(out == 10);
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaErrorInvalidValue);
  CHECK(cudaGraphLaunch(exec, s) == cudaErrorInvalidValue);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
}

TEST_CASE("emulated runtime: calls prohibited during capture fail and invalidate it",
          "[emulated]") {
  leave_clean clean;
  cudaStream_t blocking = nullptr, free = nullptr;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&free, cudaStreamNonBlocking) == cudaSuccess);
  const auto local = cudaStreamCaptureModeThreadLocal;
  CHECK(cudaStreamBeginCapture(nullptr, local) == cudaErrorStreamCaptureUnsupported);
  check_invalidates(free, local, cudaErrorStreamCaptureUnsupported,
                    [&] { return cudaStreamSynchronize(free); });
  check_invalidates(free, local, cudaErrorStreamCaptureUnsupported,
                    [&] { return cudaStreamQuery(free); });
  check_invalidates(free, local, cudaErrorStreamCaptureUnsupported,
                    [&] { return cudaDeviceSynchronize(); });
  void* p = nullptr;
  check_invalidates(free, local, cudaErrorStreamCaptureUnsupported,
                    [&] { return cudaMalloc(&p, 16); });
  std::uint32_t a = 0, b = 0;
  check_invalidates(free, cudaStreamCaptureModeGlobal, cudaErrorStreamCaptureUnsupported,
                    [&] { return cudaMemcpy(&a, &b, 4, cudaMemcpyHostToHost); });
  // The legacy stream while a blocking stream captures: an implicit dependency.
  check_invalidates(blocking, local, cudaErrorStreamCaptureImplicit,
                    [&] { return cudaMemcpyAsync(&a, &b, 4, cudaMemcpyHostToHost, nullptr); });
  REQUIRE(cudaStreamBeginCapture(blocking, local) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK(cudaStreamIsCapturing(nullptr, &status) == cudaErrorStreamCaptureImplicit);
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamEndCapture(blocking, &g) == cudaSuccess);
  CHECK(cudaGraphDestroy(g) == cudaSuccess);
  // An event recorded in a capture cannot be queried.
  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  check_invalidates(free, local, cudaErrorCapturedEvent, [&] {
    cudaEventRecord(e, free);
    return cudaEventQuery(e);
  });
  CHECK(cudaEventDestroy(e) == cudaSuccess);
  // Relaxed: cudaMalloc is allowed.
  REQUIRE(cudaStreamBeginCapture(free, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(cudaMalloc(&p, 16) == cudaSuccess);
  REQUIRE(cudaStreamEndCapture(free, &g) == cudaSuccess);
  CHECK(cudaGraphDestroy(g) == cudaSuccess);
  CHECK(cudaFree(p) == cudaSuccess);
  CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
  CHECK(cudaStreamDestroy(free) == cudaSuccess);
}

TEST_CASE("emulated runtime: capture modes and other threads", "[emulated]") {
  leave_clean clean;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  auto other_thread_malloc = [] {
    cudaError_t r = cudaErrorUnknown;
    std::thread([&] {
      void* p = nullptr;
      r = cudaMalloc(&p, 16);
      cudaFree(p);
      cudaGetLastError();
    }).join();
    return r;
  };
  // ThreadLocal: another thread's cudaMalloc is none of the capture's business.
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(other_thread_malloc() == cudaSuccess);
  // ... and it may not end the capture.
  cudaError_t ended = cudaSuccess;
  cudaGraph_t g = nullptr;
  std::thread([&] {
    ended = cudaStreamEndCapture(s, &g);
    cudaGetLastError();
  }).join();
  CHECK(ended == cudaErrorStreamCaptureWrongThread);
  REQUIRE(cudaStreamEndCapture(s, &g) == cudaSuccess);
  CHECK(cudaGraphDestroy(g) == cudaSuccess);
  // Global: another thread's cudaMalloc is prohibited and invalidates it.
  check_invalidates(s, cudaStreamCaptureModeGlobal, cudaErrorStreamCaptureUnsupported,
                    other_thread_malloc);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_graphs
