#pragma once
// Which GPUs this build's kernels run on, from the compute capability alone (no CUDA call, so
// it is tested without a GPU). A build carries machine code for each architecture of
// COURIER_CUDA_ARCHS (gpu/CMakeLists.txt) and PTX for the oldest:
// - code for sm_XY runs on capability X.Z for every Z >= Y (sm_80 on an A10's or a 3090's 8.6);
// - arch-specific code (sm_90a, sm_100a) runs only on exactly that capability;
// - PTX for compute_XY is compiled by the driver at first use on any capability >= X.Y that has
//   no machine code here (a newer GPU), which takes a while once and is cached by the driver.
#include <string>
#include <vector>

namespace courier::gpu::cuda {

struct arch_verdict {
  bool runs = false;
  bool jit = false;     // runs from PTX (no machine code for this capability)
  std::string detail;   // one line: what the build carries and why it runs or not
};

// archs: as COURIER_CUDA_ARCHS ("80", "89", "90a", ...); ptx: the architecture whose PTX the
// build embeds ("" for none).
arch_verdict kernels_run_on(int major, int minor, const std::vector<std::string>& archs,
                            const std::string& ptx);

// What this build carries (COURIER_CUDA_ARCHS and COURIER_CUDA_PTX).
const std::vector<std::string>& built_archs();
const std::string& built_ptx();

}  // namespace courier::gpu::cuda
