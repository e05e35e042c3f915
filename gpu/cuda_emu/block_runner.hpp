#pragma once
// The CUDA emulator's execution of a grid: the blocks one after another in a random order, the
// threads of a block as fibers on the calling thread, switched only where CUDA lets threads wait
// for each other — __syncthreads, __syncwarp and the warp collectives (__shfl_*_sync,
// __ballot_sync, __any_sync, __all_sync) — so that block- and warp-synchronous code runs as
// written. What the hardware would hang on, fault on or leave undefined is an emu_error naming
// it (README.md): a __syncthreads part of the block never reaches, a collective whose mask names
// a lane that does not come, a block of over 1024 threads. Written from the CUDA C++ Programming
// Guide (execution configuration, synchronization functions, warp shuffle and vote functions),
// not from courier's kernels.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

#include "gpu/cuda_emu/emu_error.hpp"

namespace courier::cuda_emu {

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

constexpr int warp_size = 32;

// The configuration of a launch (<<<grid, block, shared_bytes>>>); `seed` orders the blocks and
// the threads' turns.
struct launch_config {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;  // dynamic shared memory a block (filled with 0xCD first)
  std::uint64_t seed = 1;
};

// Runs `body` once per thread of the grid. Throws emu_error for an invalid configuration (as the
// launch's cudaErrorInvalidConfiguration) or what a block did that CUDA leaves a hang or
// undefined; an exception a thread throws ends the grid and is rethrown. A block that fails is
// abandoned where its threads stand (their stack objects are not destroyed).
void run_grid(const launch_config& config, const std::function<void()>& body);
// The configuration check alone (run_grid's first step): an emu_error naming
// cudaErrorInvalidConfiguration.
void check_launch_config(const launch_config& config);

// Inside a thread of run_grid (an emu_error elsewhere):
const dim3& thread_idx();
const dim3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();
int lane_id();
void* dynamic_shared();  // the block's dynamic shared memory
void syncthreads();
void syncwarp(unsigned mask = 0xffffffffu);
unsigned ballot_sync(unsigned mask, int predicate);
int any_sync(unsigned mask, int predicate);
int all_sync(unsigned mask, int predicate);

// cp.async.cg.shared.global [dst], [src], 16: an asynchronous copy of 16 bytes (both addresses
// 16-byte aligned), in the thread's current group until cp_async_commit closes it. The bytes
// land only when cp_async_wait lets them (the latest possible moment): a read before that sees
// what was there. A thread that ends with copies not waited for is an emu_error.
void cp_async_16(void* dst, const void* src);
void cp_async_commit();                  // cp.async.commit_group
void cp_async_wait(int most_recent_left);  // cp.async.wait_group N: all but the N most recent

namespace detail {
// A warp-wide instruction's operands and results, per lane (up to 64 bytes each way).
struct lane_words {
  std::uint64_t w[8] = {};
};
using warp_fn = void (*)(const lane_words (&in)[warp_size], lane_words (&out)[warp_size]);
// A warp-wide instruction (`.sync.aligned`: every lane of a full warp executes it): every lane
// brings `in`; once all 32 are there, `fn` computes every lane's result. `name` is for errors.
lane_words warp_instruction(const char* name, warp_fn fn, const lane_words& in);

enum class shuffle { index, up, down, bfly };
// Every lane of `mask` deposits its 8 bytes and gets those of the lane the shuffle names.
std::uint64_t shuffle_bits(shuffle kind, unsigned mask, std::uint64_t bits, int operand, int width);

template <class T>
T shuffle_value(shuffle kind, unsigned mask, T var, int operand, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "a warp shuffle moves at most 8 bytes of a trivially copyable value");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  bits = shuffle_bits(kind, mask, bits, operand, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
}  // namespace detail

// __shfl_sync and its up, down and xor forms, for values of at most 8 bytes. A source lane
// outside the caller's width-wide segment gives the caller its own value, as the Guide says
// (down past the segment's end, up before its start, xor to a later segment); one inside the
// segment that is not in `mask` is an emu_error (undefined on hardware).
template <class T>
T shfl_sync(unsigned mask, T var, int src_lane, int width = warp_size) {
  return detail::shuffle_value(detail::shuffle::index, mask, var, src_lane, width);
}
template <class T>
T shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warp_size) {
  return detail::shuffle_value(detail::shuffle::up, mask, var, static_cast<int>(delta), width);
}
template <class T>
T shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warp_size) {
  return detail::shuffle_value(detail::shuffle::down, mask, var, static_cast<int>(delta), width);
}
template <class T>
T shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warp_size) {
  return detail::shuffle_value(detail::shuffle::bfly, mask, var, lane_mask, width);
}

}  // namespace courier::cuda_emu
