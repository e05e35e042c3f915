// cuBLASLt is opened on first use (gpu/cuda/cublaslt_lazy.cpp), not at process start.
#include <cublasLt.h>
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "tests/support/run_command.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_cublaslt_lazy {

namespace {

bool mapped_here(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("cuda backend: a courier process starts without loading cuBLASLt", "[cuda]") {
  // LD_DEBUG=files: the dynamic loader names on stderr each library it loads.
  const auto r = courier::test::run_command("LD_DEBUG=files " + courier::test::courier_binary() +
                                            " --help");
  REQUIRE(r.status == 0);
  CHECK(r.err.find("libcudart") != std::string::npos);  // the loader did report its libraries
  CHECK(r.err.find("libcublasLt") == std::string::npos);
}

TEST_CASE("cuda backend: the first cuBLASLt call opens the library and reaches it", "[cuda]") {
  cublasLtMatmulPreference_t pref = nullptr;
  REQUIRE(cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS);  // host-only call
  REQUIRE(pref != nullptr);
  const std::uint64_t bytes = 1 << 20;
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &bytes, sizeof bytes) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatmulPreferenceDestroy(pref) == CUBLAS_STATUS_SUCCESS);
  CHECK(mapped_here("libcublasLt.so"));
}

}  // namespace courier_test_gpu_cuda_cublaslt_lazy
