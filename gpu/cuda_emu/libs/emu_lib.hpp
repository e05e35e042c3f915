#pragma once
// What the emulated cuBLASLt and NCCL (README.md here) share, header-only so that each shared
// library holds its own copy and neither depends on the other: the element types they read and
// write, and their work queued in stream order through the runtime's cudaLaunchHostFunc.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

// The libraries are built with hidden visibility: only the documented entry points are
// exported, so a program defining the same names (courier's lazy forwarders) never interposes
// on the libraries' internals, and the internals never call an exported name.
#define COURIER_EMU_API extern "C" __attribute__((visibility("default")))

namespace courier::cuda_emu::libs {

// The floating-point element types both libraries convert: read into f32 exactly, written from
// f32 rounded to nearest even (the conversions cuda_bf16.h's and cuda_fp16.h's _rn functions
// document; a NaN becomes the canonical NaN 0x7fff of each 16-bit type).
enum class element { f32, f16, bf16 };

inline std::size_t element_bytes(element t) {
  return t == element::f32 ? 4 : 2;
}

// IEEE binary16 from f32, rounded to nearest even, overflow to infinity, subnormals kept.
inline std::uint16_t f32_to_f16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const std::uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fff;
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (a >= 0x38800000u) {  // a normal half: rebias the exponent, round off 13 mantissa bits
    const std::uint32_t r = a - (112u << 23);
    return static_cast<std::uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  // A subnormal half is a multiple of 2^-24: scaling by 2^24 is exact, nearbyint rounds to even
  // (the default rounding mode); 1024 lands on the smallest normal's encoding, as it should.
  const float scaled = std::fabs(f) * 16777216.0f;
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
}

inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in f32
    const float v = static_cast<float>(mant) / 16777216.0f;
    return sign != 0 ? -v : v;
  }
  const std::uint32_t u = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                                    : (sign | ((exp + 112u) << 23) | (mant << 13));
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Element `i` of a buffer of type `t`, as f32.
inline float load(element t, const void* base, std::int64_t i) {
  if (t == element::f32) {
    float v;
    std::memcpy(&v, static_cast<const char*>(base) + i * 4, sizeof v);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, static_cast<const char*>(base) + i * 2, sizeof h);
  return t == element::f16 ? f16_to_f32(h) : __bfloat162float(__nv_bfloat16{h});
}

// Stores `v` rounded to nearest even as element `i` of a buffer of type `t`.
inline void store(element t, void* base, std::int64_t i, float v) {
  if (t == element::f32) {
    std::memcpy(static_cast<char*>(base) + i * 4, &v, sizeof v);
    return;
  }
  const std::uint16_t h = t == element::f16 ? f32_to_f16(v) : __float2bfloat16_rn(v).__x;
  std::memcpy(static_cast<char*>(base) + i * 2, &h, sizeof h);
}

// A library call's work, queued on a stream to run when the stream's earlier work has run.
// run() may be called many times (graph replays) and from any host thread (the one waiting).
class host_work {
 public:
  virtual ~host_work() = default;
  virtual void run() = 0;
};

// The captured work of a handle or communicator: a graph replays what it captured for as long as
// the graph lives, which the library cannot know, so captured work lives until its owner is
// destroyed (the documented rule: a captured call's handle must outlive the graph's launches).
class work_keeper {
 public:
  void keep(std::unique_ptr<host_work> w) {
    std::lock_guard<std::mutex> lock(m_);
    kept_.push_back(std::move(w));
  }

 private:
  std::mutex m_;
  std::vector<std::unique_ptr<host_work>> kept_;
};

namespace detail {
inline void run_once(void* w) {
  const std::unique_ptr<host_work> owned(static_cast<host_work*>(w));
  owned->run();
}
inline void run_kept(void* w) {
  static_cast<host_work*>(w)->run();
}
}  // namespace detail

// Queues `w` on `stream` with cudaLaunchHostFunc, so that it runs in stream order and is
// captured into a graph like any other work. Outside capture it runs once and frees itself;
// captured, `keeper` owns it. Returns the runtime's error (the work is then dropped).
inline cudaError_t enqueue(cudaStream_t stream, std::unique_ptr<host_work> w, work_keeper& keeper) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (const cudaError_t e = cudaStreamIsCapturing(stream, &status); e != cudaSuccess) return e;
  if (status != cudaStreamCaptureStatusNone) {
    const cudaError_t e = cudaLaunchHostFunc(stream, detail::run_kept, w.get());
    if (e == cudaSuccess) keeper.keep(std::move(w));
    return e;
  }
  host_work* raw = w.release();
  const cudaError_t e = cudaLaunchHostFunc(stream, detail::run_once, raw);
  if (e != cudaSuccess) delete raw;
  return e;
}

}  // namespace courier::cuda_emu::libs
