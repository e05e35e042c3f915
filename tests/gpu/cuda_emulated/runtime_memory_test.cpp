// The emulated runtime's memory calls against the Runtime API: allocations per device, pinned
// host allocations (freeing anything else is an error), copies whose kinds are checked against
// where their pointers live, and the documented synchronization of each: cudaMemset is
// asynchronous for device memory (a read before a wait sees the old bytes) and ordered on the
// legacy stream, which a non-blocking stream does not wait for; an async copy reads its source
// when it runs, so a source reused while the copy is queued is read reused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/cuda_emu/cuda_api.hpp"
#include "tests/gpu/cuda_emulated/leave_clean.hpp"

namespace courier_test_gpu_cuda_emulated_runtime_memory {

namespace emu = courier::cuda_emu;

namespace {

using courier::test::emulated::leave_clean;

void reader() {}

// A one-thread kernel on `stream` that copies *src to *dst when it runs.
void launch_read(cudaStream_t stream, const unsigned char* src, unsigned char* dst) {
  emu::enqueue_launch(stream, reinterpret_cast<const void*>(&reader), emu::launch_config{},
                      [src, dst] { *dst = *src; });
}

}  // namespace

TEST_CASE("emulated runtime: cudaMalloc and cudaFree per device, cudaHostAlloc tracked",
          "[emulated]") {
  leave_clean clean;
  void* a = nullptr;
  REQUIRE(cudaMalloc(&a, 1000) == cudaSuccess);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 256 == 0);
  std::size_t free0 = 0, total = 0;
  cudaMemGetInfo(&free0, &total);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  std::size_t free1 = 0;
  cudaMemGetInfo(&free1, &total);
  CHECK(free1 > free0);  // device 0's allocation is not device 1's
  CHECK(cudaFree(static_cast<char*>(a) + 8) == cudaErrorInvalidValue);
  CHECK(cudaFree(a) == cudaSuccess);  // any device frees it (unified addressing)
  CHECK(cudaFree(a) == cudaErrorInvalidValue);
  CHECK(cudaFree(nullptr) == cudaSuccess);
  CHECK(cudaMalloc(nullptr, 16) == cudaErrorInvalidValue);
  CHECK(cudaMalloc(&a, std::size_t{81} << 30) == cudaErrorMemoryAllocation);

  void* h = nullptr;
  REQUIRE(cudaHostAlloc(&h, 64, cudaHostAllocDefault) == cudaSuccess);
  std::vector<char> pageable(64);
  CHECK(cudaFreeHost(pageable.data()) == cudaErrorInvalidValue);
  CHECK(cudaFreeHost(h) == cudaSuccess);
  CHECK(cudaFreeHost(h) == cudaErrorInvalidValue);
  CHECK(cudaHostAlloc(&h, 64, 0x100) == cudaErrorInvalidValue);
  REQUIRE(cudaMallocHost(&h, 8) == cudaSuccess);
  CHECK(cudaFreeHost(h) == cudaSuccess);
}

TEST_CASE("emulated runtime: copies are checked against where their pointers live", "[emulated]") {
  leave_clean clean;
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 100) == cudaSuccess);
  std::vector<unsigned char> host(200, 7), back(200, 0);
  CHECK(cudaMemcpy(d, host.data(), 100, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpy(back.data(), d, 100, cudaMemcpyDefault) == cudaSuccess);  // inferred
  CHECK(back[99] == 7);
  // Past the allocation, the wrong direction, an unknown kind, a null pointer.
  CHECK(cudaMemcpy(d, host.data(), 101, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(d, host.data(), 10, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(back.data(), host.data(), 10, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(d, host.data(), 10, static_cast<cudaMemcpyKind>(7)) ==
        cudaErrorInvalidMemcpyDirection);
  CHECK(cudaMemcpyAsync(nullptr, d, 10, cudaMemcpyDefault, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaMemset(host.data(), 0, 10) == cudaErrorInvalidValue);  // pageable host memory
  CHECK(cudaMemsetAsync(static_cast<char*>(d) + 50, 0, 51, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy2DAsync(d, 10, host.data(), 10, 11, 2, cudaMemcpyDefault, nullptr) ==
        cudaErrorInvalidPitchValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidPitchValue);
  // A 2D copy: 3 rows of 4 bytes out of rows of 10, into rows of 20.
  for (int i = 0; i < 30; ++i) host[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i);
  REQUIRE(cudaMemset(d, 0, 100) == cudaSuccess);
  REQUIRE(cudaMemcpy2DAsync(d, 20, host.data(), 10, 4, 3, cudaMemcpyHostToDevice, nullptr) ==
          cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), d, 100, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back[0] == 0);
  CHECK(back[3] == 3);
  CHECK(back[4] == 0);
  CHECK(back[20] == 10);
  CHECK(back[43] == 23);
  CHECK(back[44] == 0);
  CHECK(cudaFree(d) == cudaSuccess);
}

TEST_CASE("emulated runtime: cudaMemset is asynchronous; a read before a wait sees the old bytes",
          "[emulated]") {
  leave_clean clean;
  unsigned char* d = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d), 16) == cudaSuccess);
  CHECK(d[0] == 0xCD);  // uninitialized
  REQUIRE(cudaMemset(d, 0x11, 16) == cudaSuccess);
  CHECK(d[0] == 0xCD);  // not yet
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  CHECK(d[0] == 0x11);
  // Pinned host memory: the memset is synchronous.
  unsigned char* h = nullptr;
  REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&h), 16, cudaHostAllocDefault) == cudaSuccess);
  REQUIRE(cudaMemset(h, 0x22, 16) == cudaSuccess);
  CHECK(h[15] == 0x22);
  CHECK(cudaFreeHost(h) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
}

TEST_CASE(
    "emulated runtime: a memset on the legacy stream is ordered before a blocking stream's "
    "kernel, not before a non-blocking stream's",
    "[emulated]") {
  leave_clean clean;
  unsigned char* d = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&d), 1) == cudaSuccess);
  REQUIRE(cudaMemset(d, 5, 1) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaStream_t blocking = nullptr, free = nullptr;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&free, cudaStreamNonBlocking) == cudaSuccess);
  unsigned char seen_free = 0, seen_blocking = 0;
  REQUIRE(cudaMemset(d, 0, 1) == cudaSuccess);
  launch_read(free, d, &seen_free);
  launch_read(blocking, d, &seen_blocking);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(free) == cudaSuccess);
  CHECK(seen_free == 5);  // not ordered after the memset: it read first
  REQUIRE(cudaStreamSynchronize(blocking) == cudaSuccess);
  CHECK(seen_blocking == 0);  // ordered after it
  CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
  CHECK(cudaStreamDestroy(free) == cudaSuccess);
  CHECK(cudaStreamDestroy(free) == cudaErrorInvalidResourceHandle);
  CHECK(cudaFree(d) == cudaSuccess);
}

TEST_CASE("emulated runtime: cudaMemcpyAsync reads its source when it runs", "[emulated]") {
  leave_clean clean;
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  std::uint32_t staging = 1, out = 0;
  REQUIRE(cudaMemcpyAsync(d, &staging, 4, cudaMemcpyHostToDevice, s) == cudaSuccess);
  staging = 2;  // reused while the copy is queued: the copy reads 2
  REQUIRE(cudaMemcpyAsync(&out, d, 4, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  CHECK(out == 0);  // not before a wait
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(out == 2);
  // The synchronous cudaMemcpy from pageable memory stages its source at the call.
  staging = 3;
  REQUIRE(cudaMemcpy(d, &staging, 4, cudaMemcpyHostToDevice) == cudaSuccess);
  staging = 4;
  REQUIRE(cudaMemcpy(&out, d, 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == 3);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaFree(d) == cudaSuccess);
}

}  // namespace courier_test_gpu_cuda_emulated_runtime_memory
