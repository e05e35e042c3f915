// The emulated runtime's streams, events and host functions against the Runtime API: host
// functions run in stream order when the work runs; a query's cudaErrorNotReady is also the
// thread's last error; events mark queued work, cudaEventDisableTiming events give no elapsed
// time; and the threads of two devices each synchronize their own stream while a host function
// of one blocks until the other's has run (as an emulated collective does), without deadlock.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "tests/gpu/cuda_emulated/leave_clean.hpp"

namespace courier_test_gpu_cuda_emulated_runtime_streams {

namespace {

using courier::test::emulated::leave_clean;

void push(void* log) {
  static_cast<std::vector<std::string>*>(log)->push_back("host");
}

// Both host functions of a two-rank "collective": each waits until both have arrived.
struct rendezvous {
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  bool timed_out = false;
};

void arrive(void* p) {
  auto* r = static_cast<rendezvous*>(p);
  std::unique_lock<std::mutex> lock(r->m);
  ++r->arrived;
  r->cv.notify_all();
  // (a generous bound, so a regression fails the test rather than hanging it)
  if (!r->cv.wait_for(lock, std::chrono::seconds(60), [r] { return r->arrived == 2; })) {
    r->timed_out = true;
  }
}

void count_run(void* p) {
  ++*static_cast<int*>(p);
}

}  // namespace

TEST_CASE("emulated runtime: host functions run in stream order, when the work runs",
          "[emulated]") {
  leave_clean clean;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  std::vector<std::string> log;
  REQUIRE(cudaLaunchHostFunc(s, push, &log) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, push, &log) == cudaSuccess);
  CHECK(log.empty());
  CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
  CHECK(log.empty());  // a query runs nothing
  // NotReady is the thread's last error too.
  CHECK(cudaPeekAtLastError() == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(log == std::vector<std::string>{"host", "host"});
  CHECK(cudaStreamQuery(s) == cudaSuccess);
  CHECK(cudaLaunchHostFunc(s, nullptr, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("emulated runtime: events mark queued work; NotReady sets the last error; timing",
          "[emulated]") {
  leave_clean clean;
  cudaStream_t producer = nullptr, consumer = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking) == cudaSuccess);
  cudaEvent_t start = nullptr, done = nullptr, untimed = nullptr;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&done) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
  CHECK(cudaEventQuery(done) == cudaSuccess);  // never recorded
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, done) == cudaErrorInvalidResourceHandle);
  std::vector<std::string> log;
  REQUIRE(cudaEventRecord(start, producer) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(producer, push, &log) == cudaSuccess);
  REQUIRE(cudaEventRecord(done, producer) == cudaSuccess);
  REQUIRE(cudaEventRecord(untimed, producer) == cudaSuccess);
  CHECK(cudaEventQuery(done) == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaErrorNotReady);
  CHECK(cudaEventElapsedTime(&ms, start, done) == cudaErrorNotReady);
  // The consumer waits for the event: syncing it runs the producer's work up to the record.
  REQUIRE(cudaStreamWaitEvent(consumer, done, 0) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(consumer) == cudaSuccess);
  CHECK(log.size() == 1);
  CHECK(cudaEventQuery(done) == cudaSuccess);
  REQUIRE(cudaEventElapsedTime(&ms, start, done) == cudaSuccess);
  CHECK(ms >= 0);
  REQUIRE(cudaEventSynchronize(untimed) == cudaSuccess);
  CHECK(cudaEventElapsedTime(&ms, start, untimed) == cudaErrorInvalidResourceHandle);
  // An event and a stream of different devices.
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  cudaStream_t other = nullptr;
  REQUIRE(cudaStreamCreate(&other) == cudaSuccess);
  CHECK(cudaEventRecord(done, other) == cudaErrorInvalidResourceHandle);
  // A stream of device 1 may wait for an event of device 0.
  CHECK(cudaStreamWaitEvent(other, done, 0) == cudaSuccess);
  CHECK(cudaStreamSynchronize(other) == cudaSuccess);
  CHECK(cudaStreamDestroy(other) == cudaSuccess);
  for (cudaEvent_t e : {start, done, untimed}) CHECK(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaEventDestroy(start) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamDestroy(producer) == cudaSuccess);
  CHECK(cudaStreamDestroy(consumer) == cudaSuccess);
}

TEST_CASE(
    "emulated runtime: each device's thread synchronizes its own stream while a host "
    "function of device 0 blocks until device 1's has run",
    "[emulated]") {
  leave_clean clean;
  rendezvous r;
  cudaError_t results[2] = {cudaErrorUnknown, cudaErrorUnknown};
  auto rank = [&](int device) {
    cudaSetDevice(device);
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaLaunchHostFunc(s, arrive, &r);
    results[device] = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  };
  std::thread zero(rank, 0);
  std::thread one(rank, 1);
  zero.join();
  one.join();
  CHECK_FALSE(r.timed_out);
  CHECK(r.arrived == 2);
  CHECK(results[0] == cudaSuccess);
  CHECK(results[1] == cudaSuccess);
}

TEST_CASE("emulated runtime: two threads waiting for the same work run it once", "[emulated]") {
  leave_clean clean;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  int runs = 0;
  REQUIRE(cudaLaunchHostFunc(s, count_run, &runs) == cudaSuccess);
  cudaError_t a = cudaErrorUnknown, b = cudaErrorUnknown;
  std::thread first([&] { a = cudaStreamSynchronize(s); });
  std::thread second([&] { b = cudaDeviceSynchronize(); });
  first.join();
  second.join();
  CHECK(a == cudaSuccess);
  CHECK(b == cudaSuccess);
  CHECK(runs == 1);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

namespace {
void call_runtime(void* result) {
  *static_cast<cudaError_t*>(result) = cudaStreamSynchronize(nullptr);
}
}  // namespace

TEST_CASE("emulated runtime: a host function may not call the runtime", "[emulated]") {
  leave_clean clean;
  cudaError_t inside = cudaSuccess;
  REQUIRE(cudaLaunchHostFunc(nullptr, call_runtime, &inside) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(inside == cudaErrorNotPermitted);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_streams
