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

namespace {

void count_host_fn(void* n) { ++*static_cast<int*>(n); }

}  // namespace

// Not CUDA's: courierEmuGetWorkCounts, the profile courier's bench-forward prints. Each call is
// counted where it is queued: on a stream, eagerly; in a capture, into the graph, whose calls
// each launch counts again. Event records and waits are not work.
TEST_CASE("emulated runtime: the work counts count each call once, and a graph's at each launch",
          "[emulated]") {
  leave_clean clean;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  std::uint32_t* d = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d), 64) == cudaSuccess);
  std::uint32_t host[4] = {1, 2, 3, 4};
  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  courierEmuWorkCounts before{}, after{};
  REQUIRE(courierEmuGetWorkCounts(0, &before) == 0);

  int host_calls = 0;
  launch_store(s, d, 1);
  CHECK(cudaMemcpyAsync(d, host, 16, cudaMemcpyHostToDevice, s) == cudaSuccess);
  CHECK(cudaMemcpyAsync(host, d + 4, 8, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  CHECK(cudaMemsetAsync(d + 8, 0, 12, s) == cudaSuccess);
  CHECK(cudaLaunchHostFunc(s, count_host_fn, &host_calls) == cudaSuccess);
  CHECK(cudaEventRecord(e, s) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(s, e, 0) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  launch_store(s, d, 1);
  launch_store(s, d, 2);
  CHECK(cudaMemcpyAsync(d + 1, d, 4, cudaMemcpyDeviceToDevice, s) == cudaSuccess);
  cudaGraph_t g = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &g) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(courierEmuGetWorkCounts(0, &after) == 0);
  // Counted when queued: nothing has run yet.
  CHECK(host_calls == 0);
  CHECK(after.graph_launches - before.graph_launches == 3);
  const unsigned long long eager_calls[] = {1, 1, 1, 1, 0, 0, 1};
  const unsigned long long eager_bytes[] = {0, 0, 16, 8, 0, 0, 12};
  const unsigned long long graph_calls[] = {6, 0, 0, 0, 3, 0, 0};
  const unsigned long long graph_bytes[] = {0, 0, 0, 0, 12, 0, 0};
  for (int k = 0; k < courierEmuWorkKinds; ++k) {
    INFO("kind " << k);
    CHECK(after.eager.calls[k] - before.eager.calls[k] == eager_calls[k]);
    CHECK(after.eager.bytes[k] - before.eager.bytes[k] == eager_bytes[k]);
    CHECK(after.in_graphs.calls[k] - before.in_graphs.calls[k] == graph_calls[k]);
    CHECK(after.in_graphs.bytes[k] - before.in_graphs.bytes[k] == graph_bytes[k]);
  }
  CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(host_calls == 1);
  REQUIRE(courierEmuGetWorkCounts(0, &before) == 0);  // running counts nothing more
  CHECK(before.eager.calls[courierEmuKernel] == after.eager.calls[courierEmuKernel]);
  CHECK(before.in_graphs.calls[courierEmuKernel] == after.in_graphs.calls[courierEmuKernel]);
  courierEmuWorkCounts none{};
  CHECK(courierEmuGetWorkCounts(99, &none) == -1);
  CHECK(courierEmuGetWorkCounts(0, nullptr) == -1);
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(g) == cudaSuccess);
  CHECK(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_graphs
