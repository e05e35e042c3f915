#include "actors/scheduler/waiting_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace courier::actors {

void waiting_queue::push(msg::request_id id, msg::request_id group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) {
    turn_.push_back(group{group_id, {}});
    it = groups_.emplace(group_id, std::prev(turn_.end())).first;
  }
  it->second->seqs.push_back(id);
  group_of_[id] = group_id;
  ++size_;
}

void waiting_queue::push_front(msg::request_id id) {
  preempted_.push_front(id);
  ++size_;
}

msg::request_id waiting_queue::front() const {
  if (!preempted_.empty()) return preempted_.front();
  return turn_.front().seqs.front();
}

std::vector<msg::request_id> waiting_queue::first(std::size_t n) const {
  std::vector<msg::request_id> out;
  n = std::min(n, size_);
  out.reserve(n);
  for (auto it = preempted_.begin(); it != preempted_.end() && out.size() < n; ++it) {
    out.push_back(*it);
  }
  for (std::size_t round = 0; out.size() < n; ++round) {
    for (auto g = turn_.begin(); g != turn_.end() && out.size() < n; ++g) {
      if (round < g->seqs.size()) out.push_back(g->seqs[round]);
    }
  }
  return out;
}

void waiting_queue::pop_front() {
  --size_;
  if (!preempted_.empty()) {
    preempted_.pop_front();
    return;
  }
  group& g = turn_.front();
  group_of_.erase(g.seqs.front());
  g.seqs.pop_front();
  if (g.seqs.empty()) {
    groups_.erase(g.id);
    turn_.pop_front();
  } else {
    turn_.splice(turn_.end(), turn_, turn_.begin());  // iterators stay valid
  }
}

bool waiting_queue::erase(msg::request_id id) {
  auto owner = group_of_.find(id);
  if (owner == group_of_.end()) {
    auto it = std::find(preempted_.begin(), preempted_.end(), id);
    if (it == preempted_.end()) return false;
    preempted_.erase(it);
    --size_;
    return true;
  }
  auto g = groups_.at(owner->second);
  g->seqs.erase(std::find(g->seqs.begin(), g->seqs.end(), id));
  if (g->seqs.empty()) {
    groups_.erase(g->id);
    turn_.erase(g);
  }
  group_of_.erase(owner);
  --size_;
  return true;
}

std::vector<msg::request_id> waiting_queue::ids() const {
  std::vector<msg::request_id> out(preempted_.begin(), preempted_.end());
  for (const group& g : turn_) out.insert(out.end(), g.seqs.begin(), g.seqs.end());
  return out;
}

void waiting_queue::check_invariants() const {
  std::unordered_set<msg::request_id> seen(preempted_.begin(), preempted_.end());
  if (seen.size() != preempted_.size()) {
    throw std::logic_error("waiting queue: a preempted sequence is queued twice");
  }
  std::size_t n = preempted_.size();
  if (groups_.size() != turn_.size()) {
    throw std::logic_error("waiting queue: the turn and the group index disagree");
  }
  for (auto it = turn_.begin(); it != turn_.end(); ++it) {
    auto g = groups_.find(it->id);
    if (g == groups_.end() || g->second != it) {
      throw std::logic_error("waiting queue: a group in the turn is not indexed");
    }
    if (it->seqs.empty()) throw std::logic_error("waiting queue: an empty group has a turn");
    for (msg::request_id id : it->seqs) {
      if (!seen.insert(id).second) throw std::logic_error("waiting queue: a sequence is queued twice");
      auto owner = group_of_.find(id);
      if (owner == group_of_.end() || owner->second != it->id) {
        throw std::logic_error("waiting queue: a sequence's group is not recorded");
      }
    }
    n += it->seqs.size();
  }
  if (group_of_.size() + preempted_.size() != n || n != size_) {
    throw std::logic_error("waiting queue: the size is not the number of sequences");
  }
}

}  // namespace courier::actors
