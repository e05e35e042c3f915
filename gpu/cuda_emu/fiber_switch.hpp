#pragma once
// The switch between the emulated threads' stacks (block_runner.cpp). glibc's swapcontext saves
// and restores the signal mask with a system call on every switch, which was three quarters of
// an emulated kernel's time; on x86-64 this switch saves only what the System V ABI makes a
// callee keep (rbx, rbp, r12-r15, the x87 control word, MXCSR) and moves the stack pointer.
// Elsewhere it is ucontext's.
#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace courier::cuda_emu::detail {

struct fiber_context {
#if defined(__x86_64__)
  void* sp = nullptr;  // where the switch left the saved registers
#else
  ucontext_t uc{};
#endif
};

// Makes `c` start `entry` on [stack, stack + bytes) when first switched to; entry never returns
// (it switches away for good instead).
void fiber_make(fiber_context& c, char* stack, std::size_t bytes, void (*entry)());

// Saves the running stack's state in `from` and resumes `to`.
void fiber_switch(fiber_context& from, fiber_context& to);

}  // namespace courier::cuda_emu::detail
