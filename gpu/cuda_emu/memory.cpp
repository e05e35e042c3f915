#include "gpu/cuda_emu/memory.hpp"

#include <cstdint>
#include <cstring>
#include <new>

#include "gpu/cuda_emu/asan.hpp"

namespace courier::cuda_emu {

namespace {

constexpr std::size_t alignment = 256;

// Under AddressSanitizer the bytes of an allocation's storage that were not asked for (the
// alignment's lead and the slack of its last 256-byte unit) are poisoned, so a kernel that reads
// past its buffer is reported; released storage goes back to ASan's heap, which poisons it.
void poison(const unsigned char* p, std::size_t bytes) {
#ifdef COURIER_EMU_ASAN
  __asan_poison_memory_region(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

void unpoison(const unsigned char* p, std::size_t bytes) {
#ifdef COURIER_EMU_ASAN
  __asan_unpoison_memory_region(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace

device_memory::~device_memory() {
  for (const auto& [start, a] : live_) unpoison(a.storage.get(), a.charged + alignment);
}

error device_memory::allocate(void** out, std::size_t bytes) {
  if (out == nullptr) return error::invalid_value;
  *out = nullptr;
  if (bytes == 0) return error::success;
  std::lock_guard<std::mutex> lock(mutex_);
  // Charged whole 256-byte units, as the allocator hands them out.
  const std::size_t charged = (bytes + alignment - 1) / alignment * alignment;
  if (charged > capacity_ - used_) return error::memory_allocation;
  allocation a;
  a.storage.reset(new (std::nothrow) unsigned char[charged + alignment]);
  if (!a.storage) return error::memory_allocation;
  a.bytes = bytes;
  a.charged = charged;
  const auto raw = reinterpret_cast<std::uintptr_t>(a.storage.get());
  auto* start = reinterpret_cast<unsigned char*>((raw + alignment - 1) / alignment * alignment);
  std::memset(start, 0xCD, charged);
  poison(a.storage.get(), static_cast<std::size_t>(start - a.storage.get()));
  poison(start + bytes, a.storage.get() + charged + alignment - (start + bytes));
  used_ += charged;
  *out = start;
  live_.emplace(start, std::move(a));
  return error::success;
}

error device_memory::release(void* p) {
  if (p == nullptr) return error::success;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(static_cast<const unsigned char*>(p));
  if (it == live_.end()) return error::invalid_value;  // not an allocation's start, or freed
  used_ -= it->second.charged;
  unpoison(it->second.storage.get(), it->second.charged + alignment);
  live_.erase(it);
  return error::success;
}

std::size_t device_memory::free_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_ - used_;
}

bool device_memory::owns(const void* p, std::size_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto* q = static_cast<const unsigned char*>(p);
  auto it = live_.upper_bound(q);
  if (it == live_.begin()) return false;
  --it;
  return q >= it->first && q + bytes <= it->first + it->second.bytes;
}

}  // namespace courier::cuda_emu
