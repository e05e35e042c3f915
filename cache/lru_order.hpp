#pragma once
// Keys in least-recently-used order by a logical clock: the host and disk tiers' entries. Each
// entry keeps its time (`last_used`, 0 before it is first listed); iteration is oldest first.
#include <cstddef>
#include <cstdint>
#include <map>

namespace courier::cache {

class lru_order {
 public:
  using order_map = std::map<std::uint64_t, std::uint64_t>;  // time -> key

  // Lists `key` as the most recently used (moved from `last_used` if listed there) and sets
  // `last_used` to its new time.
  void touch(std::uint64_t& last_used, std::uint64_t key) {
    if (last_used != 0) order_.erase(last_used);
    last_used = ++clock_;
    order_.emplace(last_used, key);
  }
  void erase(std::uint64_t last_used) { order_.erase(last_used); }
  // Whether `key` is listed at `last_used` (for the tiers' invariants).
  bool lists(std::uint64_t last_used, std::uint64_t key) const {
    const auto it = order_.find(last_used);
    return it != order_.end() && it->second == key;
  }
  std::size_t size() const { return order_.size(); }
  order_map::const_iterator begin() const { return order_.begin(); }
  order_map::const_iterator end() const { return order_.end(); }

 private:
  std::uint64_t clock_ = 0;
  order_map order_;
};

}  // namespace courier::cache
