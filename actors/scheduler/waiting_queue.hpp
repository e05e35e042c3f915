#pragma once
// The sequences waiting to be admitted, in the order admission takes them: preempted sequences
// first (the most recently preempted at the very front, as today: they were running before
// anything that still waits), then one sequence from each group in turn, the groups in the
// order they arrived. A group is one HTTP request's choices (msg::submit::group), so a request
// of 1024 sequences takes one admission in each round and cannot starve a later small request:
// a group that arrives behind g others is reached within g admissions.
//
// Invariants (check_invariants): every id is in exactly one of preempted_ or one group's queue;
// no group's queue is empty; turn_ and groups_ name the same groups; size() counts them all.
#include <cstddef>
#include <deque>
#include <list>
#include <unordered_map>
#include <vector>

#include "messages/messages.hpp"

namespace courier::actors {

class waiting_queue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // A new sequence, at the back of its group (a new group joins the end of the turn).
  void push(msg::request_id id, msg::request_id group);
  // A preempted sequence: ahead of everything.
  void push_front(msg::request_id id);
  // The sequence admission takes next. Not empty().
  msg::request_id front() const;
  // The first n sequences in the order admission takes them (front() first, when nothing is
  // taken out meanwhile): preempted ones, then round by round one from each group in turn.
  // Taking one of them out with erase() leaves the order of those before it unchanged.
  std::vector<msg::request_id> first(std::size_t n) const;
  // Takes front() out; its group's turn passes to the next group.
  void pop_front();
  // Takes id out wherever it is (a cancel while waiting); false when it is not here.
  bool erase(msg::request_id id);
  // Takes id out to admit it: as pop_front() when it is front() (its group's turn passes),
  // else as erase() (one admitted past those waiting for an adapter's slot takes no turn).
  void take(msg::request_id id) {
    if (front() == id) {
      pop_front();
    } else {
      erase(id);
    }
  }
  // Every waiting id, in no particular order (for invariant checks).
  std::vector<msg::request_id> ids() const;

  // Throws std::logic_error describing the first violated invariant.
  void check_invariants() const;

 private:
  struct group {
    msg::request_id id;
    std::deque<msg::request_id> seqs;  // arrival order
  };

  std::deque<msg::request_id> preempted_;  // most recently preempted first
  std::list<group> turn_;                  // front: the group whose turn it is
  std::unordered_map<msg::request_id, std::list<group>::iterator> groups_;  // by group id
  std::unordered_map<msg::request_id, msg::request_id> group_of_;  // sequence -> group id
  std::size_t size_ = 0;
};

}  // namespace courier::actors
