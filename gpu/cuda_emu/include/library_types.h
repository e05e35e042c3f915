#pragma once
// The emulated compile's stand-in for the CUDA toolkit's library_types.h: the data types the
// math libraries (cuBLASLt here, gpu/cuda_emu/libs) take, numbered as the toolkit numbers them.
// Only the real types courier and the emulated libraries' tests name.

typedef enum cudaDataType_t {
  CUDA_R_32F = 0,   // float
  CUDA_R_64F = 1,   // double
  CUDA_R_16F = 2,   // half (IEEE binary16)
  CUDA_R_8I = 3,    // signed 8-bit integer
  CUDA_R_32I = 10,  // signed 32-bit integer
  CUDA_R_16BF = 14  // nv_bfloat16
} cudaDataType;
typedef enum cudaDataType_t cudaDataType_t;
