#pragma once
// Internal to the libraries opened on first use (cublaslt_lazy.cpp, nccl_lazy.cpp): a library
// found by its soname (through the RUNPATH cudart gives the binary) or, failing that, by its
// full path, and its symbols.
#include <dlfcn.h>

namespace courier::gpu::cuda::detail {

inline void* open_library(const char* soname, const char* path) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  return h != nullptr ? h : dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

// The symbol `name` of `handle` as F (null: no library or no such symbol).
template <typename F>
F* symbol(void* handle, const char* name) {
  return handle == nullptr ? nullptr : reinterpret_cast<F*>(dlsym(handle, name));
}

}  // namespace courier::gpu::cuda::detail
