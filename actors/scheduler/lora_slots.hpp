#pragma once
// The engine's LoRA slot pool as the scheduler keeps it: which adapter each slot holds and how
// many running sequences use it. A sequence holds its adapter's slot from admission until it
// stops running (finish, cancel, failure: the sequence is destroyed; preemption: reset), released
// exactly once whatever the exit path (lora_hold, as state_slot does for a hybrid's states). A
// slot no sequence uses keeps its adapter (a later request for it loads nothing) until another
// adapter needs a slot: the least recently used such slot is given to it, and the load goes in
// the next plan (msg::step_plan::lora_loads), before any of its rows. An adapter whose every slot
// is in use waits: a request never runs on another adapter's weights.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/held_slot.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class lora_slots;
// One reference on a slot (held_slot.hpp).
using lora_hold = held_slot<lora_slots>;

class lora_slots {
 public:
  explicit lora_slots(std::int32_t capacity)
      : slots_(static_cast<std::size_t>(capacity > 0 ? capacity : 0)) {}
  lora_slots(const lora_slots&) = delete;
  lora_slots& operator=(const lora_slots&) = delete;

  std::int32_t capacity() const { return static_cast<std::int32_t>(slots_.size()); }

  // A hold on the slot holding `adapter`; when none does, the least recently used slot no
  // sequence holds is given to it and its load queued. nullopt (and no change) when every slot
  // is in use by other adapters' sequences.
  std::optional<lora_hold> acquire(const std::string& adapter) {
    std::int32_t found = -1, lru = -1;
    for (std::int32_t i = 0; i < capacity(); ++i) {
      const slot& s = slots_[static_cast<std::size_t>(i)];
      if (s.adapter == adapter && !s.unknown) found = i;
      if (s.refs == 0 &&
          (lru < 0 || s.last_used < slots_[static_cast<std::size_t>(lru)].last_used)) {
        lru = i;
      }
    }
    if (found < 0) {
      if (lru < 0) return std::nullopt;
      found = lru;
      slot& s = slots_[static_cast<std::size_t>(found)];
      s.adapter = adapter;
      s.unknown = false;
      loads_.push_back({found, adapter});
      ++num_loads_;
    }
    slot& s = slots_[static_cast<std::size_t>(found)];
    ++s.refs;
    s.last_used = ++clock_;
    return lora_hold(this, found);
  }
  // Whether some slot no sequence holds is there for an adapter in none (acquire: the least
  // recently used of them).
  bool any_free() const {
    for (const slot& s : slots_) {
      if (s.refs == 0) return true;
    }
    return false;
  }

  // The slot holding `adapter` (its load queued or done), or -1.
  std::int32_t slot_of(const std::string& adapter) const {
    for (std::int32_t i = 0; i < capacity(); ++i) {
      const slot& s = slots_[static_cast<std::size_t>(i)];
      if (s.adapter == adapter && !s.unknown) return i;
    }
    return -1;
  }
  // The slot to empty for a request that waits because every slot is in use (-1 when one is
  // free): the one with the fewest holders, the least recently used of those. While it is
  // chosen no new sequence joins it, so its holders only leave; another slot is chosen only
  // with strictly fewer holders. The fewest holders of any slot thus never grows, and reaches
  // none once the sequences running finish: the waiting request cannot starve.
  std::int32_t slot_to_drain() const {
    if (any_free()) return -1;
    std::int32_t best = -1;
    for (std::int32_t i = 0; i < capacity(); ++i) {
      const slot& s = slots_[static_cast<std::size_t>(i)];
      const slot* b = best < 0 ? nullptr : &slots_[static_cast<std::size_t>(best)];
      if (!b || s.refs < b->refs || (s.refs == b->refs && s.last_used < b->last_used)) best = i;
    }
    return best;
  }

  // Whether a load of `adapter` waits for the next plan (its host copy is still needed).
  bool load_queued(const std::string& adapter) const {
    for (const msg::lora_load& l : loads_) {
      if (l.adapter == adapter) return true;
    }
    return false;
  }

  // The loads queued since the last call, for the next plan.
  std::vector<msg::lora_load> take_loads() { return std::exchange(loads_, {}); }
  // The step that carried `loads` failed: they may not have run, so those slots hold nothing
  // known (their adapters are loaded again when next needed).
  void forget(const std::vector<msg::lora_load>& loads) {
    for (const msg::lora_load& l : loads) {
      if (l.slot >= 0 && l.slot < capacity())
        slots_[static_cast<std::size_t>(l.slot)].unknown = true;
    }
  }

  // `adapter` is gone (unloaded, no holder left): the slots holding it hold nothing.
  void drop(const std::string& adapter) {
    for (slot& s : slots_) {
      if (s.adapter == adapter && s.refs == 0) s.adapter.clear();
    }
  }

  std::int32_t num_in_use() const {
    std::int32_t n = 0;
    for (const slot& s : slots_) n += s.refs > 0 ? 1 : 0;
    return n;
  }
  std::uint64_t num_loads() const { return num_loads_; }
  std::int32_t refs(std::int32_t i) const { return slots_.at(static_cast<std::size_t>(i)).refs; }
  // Invariant check (std::logic_error): each slot's references are exactly its holders in
  // `held` (the slot each holder holds).
  void check_holders(const std::vector<std::int32_t>& held) const {
    std::vector<std::int32_t> count(slots_.size(), 0);
    for (const std::int32_t i : held) {
      if (i < 0 || i >= capacity()) throw std::logic_error("scheduler: a LoRA hold names no slot");
      ++count[static_cast<std::size_t>(i)];
    }
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].refs != count[i]) {
        throw std::logic_error("scheduler: LoRA slot references are lost or counted twice");
      }
    }
  }
  const std::string& adapter_of(std::int32_t i) const {
    return slots_.at(static_cast<std::size_t>(i)).adapter;
  }

 private:
  friend class held_slot<lora_slots>;
  void release(std::int32_t i) {
    slot& s = slots_.at(static_cast<std::size_t>(i));
    if (s.refs <= 0) throw std::logic_error("lora_slots: a slot released more often than held");
    --s.refs;
  }
  struct slot {
    std::string adapter;   // empty: never loaded
    bool unknown = false;  // its load may not have run
    std::int32_t refs = 0;
    std::uint64_t last_used = 0;
  };
  std::vector<slot> slots_;
  std::vector<msg::lora_load> loads_;
  std::uint64_t clock_ = 0;
  std::uint64_t num_loads_ = 0;
};

}  // namespace courier::actors
