// The emulator's devices against the CUDA documentation: the shared-memory limits of each
// profile (the Programming Guide's per-compute-capability table), cudaSetDevice per host thread,
// and a launch over 48 KB of dynamic shared memory allowed only after cudaFuncSetAttribute on
// the device it runs on, never past that device's opt-in maximum.
#include "gpu/cuda_emu/device.hpp"

#include <catch2/catch.hpp>

#include <thread>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_emu_device {

namespace emu = courier::cuda_emu;
using Catch::Matchers::Contains;

namespace {

void kernel_a() {}  // only their addresses matter: they name the functions
void kernel_b() {}

emu::launch_config with_shared(std::size_t bytes) {
  emu::launch_config c;
  c.block = {32, 1, 1};
  c.shared_bytes = bytes;
  return c;
}

std::string code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const emu::runtime_error& e) {
    return e.code;
  }
  return "cudaSuccess";
}

}  // namespace

TEST_CASE("cuda emu: device profiles carry the documented shared-memory limits", "[cuda_emu]") {
  CHECK(emu::profile("H100").shared_per_block_optin == 232448);  // 227 KB, compute 9.0
  CHECK(emu::profile("A100").shared_per_block_optin == 166912);  // 163 KB, 8.0
  CHECK(emu::profile("L40S").shared_per_block_optin == 101376);  // 99 KB, 8.9
  CHECK(emu::profile("L40S").major == 8);
  CHECK(emu::profile("L40S").minor == 9);
  for (const char* n : {"H100", "A100", "L40S"}) {
    CHECK(emu::profile(n).shared_per_block == 49152);
  }
  CHECK_THROWS_AS(emu::profile("V100"), emu::emu_error);
}

TEST_CASE("cuda emu: the current device is per host thread", "[cuda_emu]") {
  emu::devices d({"H100", "A100"});
  CHECK(d.count() == 2);
  CHECK(d.current() == 0);
  d.set_current(1);
  CHECK(d.current() == 1);
  int other = -1;
  std::thread([&] { other = d.current(); }).join();
  CHECK(other == 0);  // a new host thread starts on device 0
  CHECK(code_of([&] { d.set_current(2); }) == "cudaErrorInvalidDevice");
  CHECK(d.current() == 1);
  d.set_current(0);
}

TEST_CASE(
    "cuda emu: over 48 KB of dynamic shared memory needs the attribute on the device "
    "that launches, within its opt-in maximum",
    "[cuda_emu]") {
  emu::devices d({"H100", "H100", "L40S"});
  const auto fa = reinterpret_cast<const void*>(&kernel_a);
  const auto fb = reinterpret_cast<const void*>(&kernel_b);
  int ran = 0;
  auto body = [&] { ++ran; };
  // Up to 48 KB needs nothing.
  d.launch(fa, with_shared(48 * 1024), body);
  CHECK(ran == 32);
  // 100 KB: refused until the attribute is set for this function on this device.
  CHECK(code_of([&] { d.launch(fa, with_shared(102400), body); }) == "cudaErrorInvalidValue");
  d.set_max_dynamic_shared(fa, 102400);
  d.launch(fa, with_shared(102400), body);
  CHECK(ran == 64);
  CHECK(code_of([&] { d.launch(fb, with_shared(102400), body); }) == "cudaErrorInvalidValue");
  // Set on device 0 only: device 1 refuses the same launch (an opt-in set once per process).
  d.set_current(1);
  try {
    d.launch(fa, with_shared(102400), body);
    FAIL("launched");
  } catch (const emu::runtime_error& e) {
    CHECK_THAT(e.what(), Contains("device 1") && Contains("never set here"));
  }
  // The check alone runs nothing (the runtime checks at the launch, runs when waited for).
  CHECK(code_of([&] { d.check_launch(fa, with_shared(102400)); }) == "cudaErrorInvalidValue");
  d.set_current(0);
  d.check_launch(fa, with_shared(102400));
  CHECK(ran == 64);
  // The L40S's opt-in maximum is 101,376 bytes: 102,400 cannot be set there at all.
  d.set_current(2);
  CHECK(code_of([&] { d.set_max_dynamic_shared(fa, 102400); }) == "cudaErrorInvalidValue");
  d.set_max_dynamic_shared(fa, 101376);
  CHECK(code_of([&] { d.launch(fa, with_shared(102400), body); }) == "cudaErrorInvalidValue");
  d.launch(fa, with_shared(101376), body);
  CHECK(ran == 96);
  d.set_current(0);
}

}  // namespace courier_test_gpu_cuda_emu_device
