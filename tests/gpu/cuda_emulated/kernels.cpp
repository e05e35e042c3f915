// The CUDA kernels that run on the emulator, compiled here a second time (the first is nvcc's,
// in courier_gpu_cuda) against gpu/cuda_emu/include's stand-ins for the toolkit's headers.
#include "gpu/cuda/kernels/elementwise_convert.cu"
#include "gpu/cuda/kernels/fill.cu"
#include "gpu/cuda/kernels/elementwise_silu.cu"
#include "gpu/cuda/kernels/penalty_lists.cu"
#include "gpu/cuda/kernels/elementwise_norm.cu"
