#pragma once
// The emulated compile's stand-in for the CUDA toolkit's cuda_runtime_api.h (gpu/cuda_emu/cuda_api.hpp).
#include "gpu/cuda_emu/cuda_api.hpp"
