#pragma once
// The engine's copy of each sequence's block table, kept across steps and brought up to date by
// each plan row's difference (plan_row::keep_blocks, new_blocks), so the step message carries a
// block only when a sequence gains or changes one. The scheduler decides the tables; this only
// follows. Invariant: after apply(row), the copy for row.seq is the scheduler's table as it was
// when it planned the row; a sequence in a plan's `ended` is forgotten.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "messages/step.hpp"

namespace courier::actors {

class block_tables {
 public:
  // Applies a row's difference; returns the sequence's table. Throws std::invalid_argument when
  // the row keeps more entries than the copy has (a protocol error: the scheduler and the engine
  // disagree), leaving the copy as it was.
  const std::vector<std::int32_t>& apply(const msg::plan_row& row);
  // Forgets ended sequences (unknown ids are ignored).
  void release(const std::vector<msg::request_id>& ended);
  // The copy for seq, or nullptr.
  const std::vector<std::int32_t>* find(msg::request_id seq) const;
  std::size_t num_sequences() const { return tables_.size(); }

 private:
  std::unordered_map<msg::request_id, std::vector<std::int32_t>> tables_;
};

}  // namespace courier::actors
