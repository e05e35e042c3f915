#include "gpu/cuda_emu/fiber_switch.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
extern "C" void courier_emu_switch(void** save_sp, void* load_sp);
extern "C" void courier_emu_fiber_start();

// courier_emu_switch: pushes the callee-saved registers and the floating-point control words on
// the running stack, stores its pointer in *save_sp, loads load_sp and pops the same from there;
// `ret` then returns into the other stack's switch, or, on a fresh one, into fiber_start, which
// calls the entry fiber_make left in r12 (rsp 16-byte aligned at the call, as the ABI wants).
asm(R"(
  .text
  .globl courier_emu_switch
  .hidden courier_emu_switch
  .type courier_emu_switch, @function
courier_emu_switch:
  .cfi_startproc
  endbr64
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  fnstcw (%rsp)
  stmxcsr 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size courier_emu_switch, .-courier_emu_switch

  .globl courier_emu_fiber_start
  .hidden courier_emu_fiber_start
  .type courier_emu_fiber_start, @function
courier_emu_fiber_start:
  endbr64
  callq *%r12
  ud2
  .size courier_emu_fiber_start, .-courier_emu_fiber_start
)");
#endif

namespace courier::cuda_emu::detail {

#if defined(__x86_64__)

void fiber_make(fiber_context& c, char* stack, std::size_t bytes, void (*entry)()) {
  // From the new stack pointer up: x87 control word, MXCSR, r15, r14, r13, r12 (the entry), rbx,
  // rbp, the return address (fiber_start); above it the 16-byte aligned top.
  const auto top = reinterpret_cast<std::uintptr_t>(stack + bytes) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 9 * 8);
  std::memset(frame, 0, 9 * 8);
  std::uint16_t control = 0;
  std::uint32_t mxcsr = 0;
  asm volatile("fnstcw %0" : "=m"(control));
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  std::memcpy(&frame[0], &control, sizeof control);
  std::memcpy(&frame[1], &mxcsr, sizeof mxcsr);
  frame[5] = reinterpret_cast<std::uint64_t>(entry);
  frame[8] = reinterpret_cast<std::uint64_t>(&courier_emu_fiber_start);
  c.sp = frame;
}

void fiber_switch(fiber_context& from, fiber_context& to) { courier_emu_switch(&from.sp, to.sp); }

#else

void fiber_make(fiber_context& c, char* stack, std::size_t bytes, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}

void fiber_switch(fiber_context& from, fiber_context& to) { swapcontext(&from.uc, &to.uc); }

#endif

}  // namespace courier::cuda_emu::detail
