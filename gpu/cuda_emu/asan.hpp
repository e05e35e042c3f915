#pragma once
// COURIER_EMU_ASAN: defined when compiled under AddressSanitizer (GCC's __SANITIZE_ADDRESS__,
// clang's __has_feature), or by the build for an emulator compiled uninstrumented into a
// sanitized program (gpu/CMakeLists.txt), with ASan's interface: poisoning memory (memory.cpp)
// and announcing the emulated threads' stack switches (block_runner.cpp). Through ASan's
// functions, never its ASAN_*_MEMORY_REGION macros, which do nothing in uninstrumented code.
#if defined(COURIER_EMU_ASAN)
#elif defined(__SANITIZE_ADDRESS__)
#define COURIER_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COURIER_EMU_ASAN 1
#endif
#endif
#ifdef COURIER_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
