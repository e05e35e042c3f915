#pragma once
// The per-sequence recurrent-state slots of a hybrid model (its Mamba-2 layers' conv and SSM
// states, which the engine's model keeps on the device, one row per slot): a fixed pool sized by
// the memory plan. A sequence holds a slot from admission to its end; the slot goes back when
// its holder does (finish, cancel, failure: the sequence is destroyed) or is reset (preemption),
// exactly once, whatever the exit path (the reference design's SlotGuard).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "actors/scheduler/held_slot.hpp"

namespace courier::actors {

class state_pool;
// One slot held (held_slot.hpp).
using state_slot = held_slot<state_pool>;

class state_pool {
 public:
  explicit state_pool(std::int32_t capacity) : capacity_(capacity > 0 ? capacity : 0) {
    for (std::int32_t i = capacity_ - 1; i >= 0; --i) free_.push_back(i);  // slot 0 first
  }
  state_pool(const state_pool&) = delete;
  state_pool& operator=(const state_pool&) = delete;

  // A free slot, or nullopt when every slot is held.
  std::optional<state_slot> take() {
    if (free_.empty()) return std::nullopt;
    const std::int32_t i = free_.back();
    free_.pop_back();
    return state_slot(this, i);
  }
  std::int32_t capacity() const { return capacity_; }
  std::int32_t num_free() const { return static_cast<std::int32_t>(free_.size()); }
  // Invariant check (std::logic_error): `held` (the index each holder holds) names valid slots,
  // none twice, and with the free ones accounts for every slot.
  void check_holders(const std::vector<std::int32_t>& held) const {
    std::vector<char> seen(static_cast<std::size_t>(capacity_), 0);
    for (const std::int32_t i : held) {
      if (i < 0 || i >= capacity_ || seen[static_cast<std::size_t>(i)]++) {
        throw std::logic_error("scheduler: a holder holds no state slot, or a shared one");
      }
    }
    if (num_free() + static_cast<std::int32_t>(held.size()) != capacity_) {
      throw std::logic_error("scheduler: state slots are lost or held twice");
    }
  }

 private:
  friend class held_slot<state_pool>;
  void release(std::int32_t i) { free_.push_back(i); }
  std::int32_t capacity_;
  std::vector<std::int32_t> free_;
};

}  // namespace courier::actors
