#pragma once
// The CUDA Runtime API as courier's host code calls it, for the emulated compile
// (cuda_api.hpp includes it): types, enumerators and error codes numbered as the Runtime API's
// documentation (and cuda_runtime_api.h / driver_types.h) number them, and the functions'
// declarations with the documented signatures. runtime*.cpp (library courier_cuda_emu_runtime)
// defines them; it is never linked beside NVIDIA's libcudart, whose names these are.
#include <cstddef>

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorStreamCaptureImplicit = 906,
  cudaErrorCapturedEvent = 907,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // nullptr: the legacy default stream
struct CUevent_st;
typedef struct CUevent_st* cudaEvent_t;
struct CUgraph_st;
typedef struct CUgraph_st* cudaGraph_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef void (*cudaHostFn_t)(void* userData);

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaStreamLegacy ((cudaStream_t)0x1)  // the legacy stream, as nullptr
#define cudaEventWaitDefault 0x00
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04

enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

// The fields of cudaDeviceProp courier reads (the real struct has many more; a program compiled
// here reads only these).
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int maxThreadsPerBlock;
  int major;
  int minor;
  int multiProcessorCount;
  std::size_t sharedMemPerMultiprocessor;
  std::size_t sharedMemPerBlockOptin;
};

extern "C" {
// Errors.
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
// Devices.
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total);
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
// Memory.
cudaError_t cudaMalloc(void** devPtr, std::size_t size);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaHostAlloc(void** pHost, std::size_t size, unsigned int flags);
cudaError_t cudaMallocHost(void** ptr, std::size_t size);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream);
cudaError_t cudaMemset(void* devPtr, int value, std::size_t count);
cudaError_t cudaMemsetAsync(void* devPtr, int value, std::size_t count, cudaStream_t stream);
// Streams.
cudaError_t cudaStreamCreate(cudaStream_t* pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);
// Events.
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
// Graphs (stream capture).
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
// Not CUDA's: the emulator's own, for its NCCL (libs/nccl_clique.cpp): runs one ready item of
// `device`'s streams (streams.hpp, stream_set::run_ready), as the device would with no host
// thread waiting; 1 when it ran one, 0 when none was ready or another thread runs that device.
int courierEmuRunReady(int device);
// Not CUDA's, for the emulated libraries: 1 when [p, p + bytes) lies inside one live allocation
// of `device` (bytes 0: p inside one), else 0; then, when `fault` names the work touching it,
// the device gets the sticky cudaErrorIllegalAddress, as a GPU faulting there, said on stderr.
int courierEmuDeviceRange(int device, const void* p, std::size_t bytes, const char* fault);
// Not CUDA's: what a device's streams were given, for a profile of the work (courier's cuda
// device reports it: gpu::device::counted_work). Counted when queued: a call on a stream
// outside a capture is eager; a capture counts its calls into its graph, and each launch of the
// graph adds them to in_graphs. Host functions are the emulated cuBLASLt's and NCCL's calls
// (courier's own code queues none); event records and waits are not counted.
enum courierEmuWorkKind {
  courierEmuKernel,        // kernel launches
  courierEmuHostFunction,  // cudaLaunchHostFunc
  courierEmuCopyHtoD,      // cudaMemcpy*, by direction; bytes: those copied
  courierEmuCopyDtoH,
  courierEmuCopyDtoD,
  courierEmuCopyHtoH,
  courierEmuMemset,  // bytes: those set
  courierEmuWorkKinds,
};
struct courierEmuWorkTally {
  unsigned long long calls[courierEmuWorkKinds];
  unsigned long long bytes[courierEmuWorkKinds];
};
struct courierEmuWorkCounts {
  courierEmuWorkTally eager, in_graphs;
  unsigned long long graph_launches;
};
// Since the process began; 0, or -1 when `device` is not an emulated device.
int courierEmuGetWorkCounts(int device, courierEmuWorkCounts* out);
}
