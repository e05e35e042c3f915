#pragma once
// A slot of a pool held by one sequence: a hybrid's recurrent-state slot (state_pool), a LoRA
// adapter's slot (lora_slots). Move-only; the slot goes back to its pool (Pool::release) when
// the holder is destroyed or reset, exactly once whatever the exit path (the reference design's
// SlotGuard). Empty after a move or reset().
#include <cstdint>
#include <utility>

namespace courier::actors {

template <class Pool>
class held_slot {
 public:
  held_slot() = default;
  held_slot(held_slot&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), index_(o.index_) {}
  held_slot& operator=(held_slot&& o) noexcept {
    if (this != &o) {
      reset();
      pool_ = std::exchange(o.pool_, nullptr);
      index_ = o.index_;
    }
    return *this;
  }
  held_slot(const held_slot&) = delete;
  held_slot& operator=(const held_slot&) = delete;
  ~held_slot() { reset(); }

  explicit operator bool() const { return pool_ != nullptr; }
  std::int32_t index() const { return pool_ ? index_ : -1; }
  void reset() {
    if (pool_) pool_->release(index_);
    pool_ = nullptr;
    index_ = -1;
  }

 private:
  friend Pool;
  held_slot(Pool* pool, std::int32_t index) : pool_(pool), index_(index) {}
  Pool* pool_ = nullptr;
  std::int32_t index_ = -1;
};

}  // namespace courier::actors
