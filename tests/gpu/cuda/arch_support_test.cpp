// Which GPUs a build's kernels run on, from the compute capability (no GPU needed): NVIDIA's
// compatibility rules (CUDA C++ Programming Guide, "Binary Compatibility"), written out per GPU.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpu/cuda/arch_support.hpp"

namespace courier_test_gpu_cuda_arch_support {

using courier::gpu::cuda::kernels_run_on;

const std::vector<std::string> all = {"80", "89", "90a", "100a"};

TEST_CASE("cuda archs: each GPU users have runs the kernels of its own architecture", "[cuda]") {
  struct gpu {
    const char* name;
    int major, minor;
    const char* runs;  // the sm_ whose machine code it runs
  };
  for (const gpu& g : {gpu{"A100", 8, 0, "sm_80"}, gpu{"A10 / RTX 3090", 8, 6, "sm_80"},
                       gpu{"Jetson Orin", 8, 7, "sm_80"}, gpu{"L40S / RTX 4090", 8, 9, "sm_89"},
                       gpu{"H100 / H200", 9, 0, "sm_90a"}, gpu{"B200", 10, 0, "sm_100a"}}) {
    INFO(g.name);
    const auto v = kernels_run_on(g.major, g.minor, all, "80");
    CHECK(v.runs);
    CHECK_FALSE(v.jit);
    CHECK(v.detail.find(std::string("runs the ") + g.runs + " kernels") != std::string::npos);
  }
}

TEST_CASE("cuda archs: arch-specific code runs on that GPU only; newer GPUs take the PTX",
          "[cuda]") {
  // B300 (10.3) and RTX 5090 (12.0): sm_100a is not theirs; the compute_80 PTX is.
  for (auto [major, minor] : {std::pair{10, 3}, std::pair{12, 0}, std::pair{11, 0}}) {
    const auto v = kernels_run_on(major, minor, all, "80");
    CHECK(v.runs);
    CHECK(v.jit);
    CHECK(v.detail.find("PTX") != std::string::npos);
    CHECK_FALSE(kernels_run_on(major, minor, all, "").runs);
  }
  // An H100 in a build for sm_100a only: specific code does not run on 9.0; neither does the
  // PTX of a newer architecture.
  CHECK_FALSE(kernels_run_on(9, 0, {"100a"}, "100").runs);
  // sm_89 code does not run on 8.6 (minor versions only run code of their own or older ones).
  CHECK_FALSE(kernels_run_on(8, 6, {"89"}, "").runs);
  CHECK(kernels_run_on(8, 9, {"80"}, "").runs);
  CHECK_FALSE(kernels_run_on(9, 0, {"80", "89"}, "").runs);  // no major-version carry-over
}

TEST_CASE("cuda archs: a GPU older than sm_80 is refused, saying what the build carries",
          "[cuda]") {
  for (auto [major, minor] : {std::pair{7, 5}, std::pair{7, 0}, std::pair{6, 1}}) {
    const auto v = kernels_run_on(major, minor, all, "80");
    CHECK_FALSE(v.runs);
    CHECK(v.detail.find("not supported") != std::string::npos);
    CHECK(v.detail.find("sm_80, sm_89, sm_90a, sm_100a, PTX compute_80") != std::string::npos);
  }
}

TEST_CASE("cuda archs: this build carries the architectures CMake was given", "[cuda]") {
  const auto& archs = courier::gpu::cuda::built_archs();
  REQUIRE_FALSE(archs.empty());
  // Whatever the list, the H200 this project is first run on must be in it.
  CHECK(kernels_run_on(9, 0, archs, courier::gpu::cuda::built_ptx()).runs);
}

}  // namespace courier_test_gpu_cuda_arch_support
