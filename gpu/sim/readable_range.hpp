#pragma once
// check_range(p, bytes): under AddressSanitizer, reports an access to [p, p + bytes) at once if
// any byte of it is not addressable (freed, out of bounds, never allocated), as an instrumented
// access to its first bad byte would. Lets a hot loop skip per-element instrumentation
// (COURIER_UNSANITIZED_LOOP) while its caller still checks every range the loop touches.
// Without ASan both are nothing.
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define COURIER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COURIER_ASAN 1
#endif
#endif

#ifdef COURIER_ASAN
#include <sanitizer/asan_interface.h>
#define COURIER_UNSANITIZED_LOOP __attribute__((no_sanitize("address", "undefined")))
#else
#define COURIER_UNSANITIZED_LOOP
#endif

namespace courier::gpu::sim {

inline void check_range(const void* p, std::size_t bytes) {
#ifdef COURIER_ASAN
  if (bytes == 0) return;
  if (void* bad = __asan_region_is_poisoned(const_cast<void*>(p), bytes)) {
    // An instrumented one-byte read of the first bad address: ASan reports it as any bad access,
    // with this stack.
    volatile const char c = *static_cast<const volatile char*>(bad);
    (void)c;
  }
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace courier::gpu::sim
