#include "gpu/cuda/arch_support.hpp"

#include <cctype>
#include <sstream>

#ifndef COURIER_CUDA_ARCHS
#error "COURIER_CUDA_ARCHS (the architectures the kernels are built for) comes from gpu/CMakeLists.txt"
#endif

namespace courier::gpu::cuda {

namespace {

struct arch {
  int major = 0, minor = 0;
  bool specific = false;  // "90a": this capability only
};

// "89" -> 8.9, "90a" -> 9.0 specific, "100a" -> 10.0 specific, "120" -> 12.0.
arch parse(const std::string& s) {
  arch a;
  std::string digits = s;
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    a.specific = true;
    digits.pop_back();
  }
  const int v = digits.empty() ? 0 : std::stoi(digits);
  a.major = v / 10;
  a.minor = v % 10;
  return a;
}

std::string list(const std::vector<std::string>& archs, const std::string& ptx) {
  std::string out;
  for (const std::string& a : archs) out += (out.empty() ? "sm_" : ", sm_") + a;
  if (!ptx.empty()) out += (out.empty() ? "" : ", ") + std::string("PTX compute_") + ptx;
  return out.empty() ? "nothing" : out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

arch_verdict kernels_run_on(int major, int minor, const std::vector<std::string>& archs,
                            const std::string& ptx) {
  arch_verdict v;
  const std::string cc = "sm_" + std::to_string(major) + std::to_string(minor);
  const std::string carried = "this build carries " + list(archs, ptx);
  // The driver loads the closest machine code: exact arch-specific code, else the newest minor
  // version not above the GPU's.
  const std::string* best = nullptr;
  int best_rank = -1;
  for (const std::string& s : archs) {
    const arch a = parse(s);
    const bool match = a.specific ? (a.major == major && a.minor == minor)
                                  : (a.major == major && a.minor <= minor);
    const int rank = a.minor * 2 + (a.specific ? 1 : 0);
    if (match && rank > best_rank) {
      best = &s;
      best_rank = rank;
    }
  }
  if (best) {
    v.runs = true;
    v.detail = cc + " runs the sm_" + *best + " kernels (" + carried + ")";
    return v;
  }
  if (!ptx.empty()) {
    const arch p = parse(ptx);
    if (major > p.major || (major == p.major && minor >= p.minor)) {
      v.runs = v.jit = true;
      v.detail = cc + " has no machine code here: the driver compiles the compute_" + ptx +
                 " PTX at first start (" + carried + ")";
      return v;
    }
  }
  v.detail = cc + " is not supported: " + carried +
             " (the kernels need sm_80 or newer: bf16 mma.sync and ldmatrix)";
  return v;
}

const std::vector<std::string>& built_archs() {
  static const std::vector<std::string> archs = split(COURIER_CUDA_ARCHS);
  return archs;
}

const std::string& built_ptx() {
  static const std::string ptx = COURIER_CUDA_PTX;
  return ptx;
}

}  // namespace courier::gpu::cuda
