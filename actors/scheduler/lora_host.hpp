#pragma once
// The adapters whose host copy the engine keeps (lora.max_cpu_loras; 0: every registered
// adapter keeps one), as the scheduler keeps it. A slot is loaded only from a host copy, so a
// request whose adapter needs a slot and has no copy waits (lora_admission::gate) while the
// engine reads its folder again (stage: on a thread of its own, the steps going on). Copies
// beyond the limit are dropped least recently used first (evict), never one that a load queued
// for the next plan still needs: the engine gets the drop after every plan sent before it, so a
// load already planned has run.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace courier::actors {

class lora_host_copies {
 public:
  // `resident`: the adapters with a copy at start.
  lora_host_copies(std::int32_t capacity, const std::vector<std::string>& resident)
      : capacity_(capacity > 0 ? capacity : 0) {
    for (const std::string& n : resident) used_[n] = ++clock_;
  }

  bool limited() const { return capacity_ > 0; }
  bool resident(const std::string& name) const { return !limited() || used_.count(name) > 0; }

  // `name` is used now (a request with it admitted): the least recently used copy goes first.
  void touch(const std::string& name) {
    auto it = used_.find(name);
    if (it != used_.end()) it->second = ++clock_;
  }
  // Asks the engine for a copy of `name` (once while one is asked for): take_stages() names it.
  void stage(const std::string& name) {
    if (!limited() || resident(name) || !staging_.insert(name).second) return;
    stages_.push_back(name);
    ++num_staged_;
  }
  std::vector<std::string> take_stages() { return std::exchange(stages_, {}); }
  // The engine has read it (ok) or could not; false when nothing was being staged as `name`.
  bool staged(const std::string& name, bool ok) {
    if (!staging_.erase(name)) return false;
    if (ok) used_[name] = ++clock_;
    return true;
  }
  // A copy the engine made otherwise (an adapter loaded at run time).
  void add(const std::string& name) { used_[name] = ++clock_; }
  // `name` is gone from the engine (unloaded).
  void forget(const std::string& name) {
    used_.erase(name);
    staging_.erase(name);
  }
  // Drops the copies beyond the limit, least recently used first, but none that `needed`
  // keeps: take_evictions() names them for the engine.
  void evict(const std::function<bool(const std::string&)>& needed) {
    if (!limited()) return;
    std::vector<std::pair<std::uint64_t, std::string>> order;
    for (const auto& [name, t] : used_) order.emplace_back(t, name);
    std::sort(order.begin(), order.end());
    for (const auto& [t, name] : order) {
      if (used_.size() <= static_cast<std::size_t>(capacity_)) break;
      if (needed(name)) continue;
      used_.erase(name);
      evictions_.push_back(name);
      ++num_evicted_;
    }
  }
  std::vector<std::string> take_evictions() { return std::exchange(evictions_, {}); }
  std::uint64_t num_staged() const { return num_staged_; }
  std::uint64_t num_evicted() const { return num_evicted_; }

 private:
  std::int32_t capacity_;
  std::map<std::string, std::uint64_t> used_;  // resident copies: when last used
  std::set<std::string> staging_;
  std::vector<std::string> stages_;     // asked for, not yet sent
  std::vector<std::string> evictions_;  // dropped, not yet sent
  std::uint64_t clock_ = 0;
  std::uint64_t num_staged_ = 0;
  std::uint64_t num_evicted_ = 0;
};

}  // namespace courier::actors
