#pragma once
// For the emulated runtime's tests, which share one process's runtime: a case that changes the
// current device or leaves a last error puts both back when it ends, so later cases start on
// device 0 with no last error.
#include "gpu/cuda_emu/cuda_api.hpp"

namespace courier::test::emulated {

struct leave_clean {
  ~leave_clean() {
    cudaSetDevice(0);
    cudaGetLastError();
  }
};

}  // namespace courier::test::emulated
