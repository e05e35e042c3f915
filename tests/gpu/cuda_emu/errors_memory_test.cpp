// The emulator's error state and device memory against the Runtime API: the last error is per
// host thread, returned and reset by cudaGetLastError, left by cudaPeekAtLastError, set by a
// query's cudaErrorNotReady too; a sticky error stays with its device. Allocations are 256-byte
// aligned, uninitialized (0xCD), accounted in cudaMemGetInfo, refused past capacity; freeing
// what is not an allocation is an error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>

#include "gpu/cuda_emu/errors.hpp"
#include "gpu/cuda_emu/memory.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define COURIER_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COURIER_TEST_ASAN 1
#endif
#endif
#if COURIER_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_emu_errors_memory {

namespace emu = courier::cuda_emu;
using emu::error;

TEST_CASE("cuda emu: the last error is per host thread; get resets it, peek does not",
          "[cuda_emu]") {
  emu::error_state s;
  CHECK(s.get_last(0) == error::success);
  CHECK(s.returned(0, error::invalid_value) == error::invalid_value);
  CHECK(s.peek_last() == error::invalid_value);
  CHECK(s.peek_last() == error::invalid_value);
  // A successful call leaves the last error as it was.
  CHECK(s.returned(0, error::success) == error::success);
  CHECK(s.get_last(0) == error::invalid_value);
  CHECK(s.get_last(0) == error::success);  // reset
  // A query that is not ready sets it too (what cuda_copies::ready() forgot to clear: R1).
  s.returned(0, error::not_ready);
  CHECK(s.get_last(0) == error::not_ready);
  // Another thread has its own.
  s.returned(0, error::invalid_device);
  error other = error::invalid_value;
  std::thread([&] { other = s.get_last(0); }).join();
  CHECK(other == error::success);
  CHECK(s.get_last(0) == error::invalid_device);
  CHECK(std::string(emu::error_name(error::not_ready)) == "cudaErrorNotReady");
  CHECK(emu::error_from_name("cudaErrorStreamCaptureImplicit") == error::stream_capture_implicit);
  CHECK(emu::error_from_name("cudaErrorNoSuchThing") == error::unknown);
  CHECK(std::string(emu::error_description(error::invalid_value)) == "invalid argument");
  CHECK(static_cast<int>(error::captured_event) == 907);  // the Runtime API's numbering
  CHECK(static_cast<int>(error::not_permitted) == 800);
}

TEST_CASE("cuda emu: a sticky error stays with its device", "[cuda_emu]") {
  emu::error_state s;
  CHECK(s.returned(1, error::illegal_address) == error::illegal_address);
  CHECK(s.get_last(1) == error::illegal_address);
  CHECK(s.get_last(1) == error::illegal_address);  // not reset
  CHECK(s.device_error(1) == error::illegal_address);
  // Every later call on that device returns it, a successful one included.
  CHECK(s.returned(1, error::success) == error::illegal_address);
  // The other device is unaffected.
  CHECK(s.device_error(0) == error::success);
  CHECK(s.returned(0, error::success) == error::success);
}

TEST_CASE("cuda emu: device memory is aligned, uninitialized, accounted and bounded",
          "[cuda_emu]") {
  emu::device_memory m(4096);
  CHECK(m.free_bytes() == 4096);
  void* a = nullptr;
  REQUIRE(m.allocate(&a, 100) == error::success);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 256 == 0);
  CHECK(static_cast<unsigned char*>(a)[99] == 0xCD);
  CHECK(m.free_bytes() == 4096 - 256);  // whole 256-byte units
  CHECK(m.owns(a, 100));
  CHECK_FALSE(m.owns(a, 101));  // past what was asked for
  CHECK(m.owns(static_cast<char*>(a) + 50, 50));
#if COURIER_TEST_ASAN
  // Under AddressSanitizer the slack past the bytes asked for is poisoned.
  CHECK(__asan_address_is_poisoned(static_cast<char*>(a) + 100));
  CHECK_FALSE(__asan_address_is_poisoned(static_cast<char*>(a) + 99));
#endif
  void* big = nullptr;
  CHECK(m.allocate(&big, 4096) == error::memory_allocation);
  CHECK(big == nullptr);
  void* zero = &m;
  CHECK(m.allocate(&zero, 0) == error::success);
  CHECK(zero == nullptr);
  CHECK(m.release(static_cast<char*>(a) + 8) == error::invalid_value);  // not a start
  CHECK(m.release(a) == error::success);
  CHECK(m.release(a) == error::invalid_value);  // twice
  CHECK_FALSE(m.owns(a, 1));
  CHECK(m.release(nullptr) == error::success);
  CHECK(m.free_bytes() == 4096);
}

}  // namespace courier_test_gpu_cuda_emu_errors_memory
