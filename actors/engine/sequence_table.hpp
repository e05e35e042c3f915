#pragma once
// The engine's record of each running sequence, kept across steps: one table, one release (a
// plan's `ended`), one reset (its `preempted`). The scheduler decides everything; this only
// follows its plans (messages/README.md: a sequence_start, then rows that carry what changes).
//
// A record holds, until the sequence ends: its sampling parameters (the logit bias kept apart,
// read only when the device's copy is written) and its grammar's state. Until it ends or is
// preempted (its device state, sent again by its next start): its state and LoRA slots, its
// penalty list, its block table (brought up to date by each row's difference), and its slot in
// the model's per-sequence device state (model::llama_model::token_slots(), twice the running
// sequences a step may have):
// - its next token: every row that samples one token writes it there right after sampling
//   (forward_row::next_slot), and a row planned while that step ran ("follows") reads it there
//   (forward_row::token_slot) before the step has even finished. Steps launch in plan order, so
//   the plan before is always the one a row follows; the slot is read only when that plan's
//   launch wrote it, else the row does not run and its result is an error.
// - its block table (forward_row::table_slot): each step writes only the entries past those
//   known to be there (table_keep): what a launch that succeeded wrote, cut to the entries
//   each later row keeps.
// - its logit bias and penalty list (bias_slot, penalty_slot): written from the record by its
//   first sampling row in the slot (bias_init, penalty_init), read in place after; each token
//   sampled for it is counted into the penalty list on the device.
// A sequence takes a slot with its start and gives it back at its end or preemption.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/step.hpp"

namespace courier::actors {

struct sequence_grammar;  // engine/grammar_rows.hpp: a constrained sequence's matcher

struct sequence_record {
  // Until the sequence ends.
  msg::sampling_params sampling;  // without the logit bias
  bool has_sampling = false;      // a start carried them
  std::vector<msg::token_id> bias_tokens;
  std::vector<float> bias_values;
  std::shared_ptr<sequence_grammar> grammar;  // made at its first constrained row
  // Until it ends or is preempted.
  bool started = false;  // a start came since it was last preempted
  msg::sequence_start start;  // without the sampling parameters
  std::vector<std::int32_t> table;
  std::int32_t slot = -1;  // its device slot; -1: none free (its rows do not run)
  bool first_row = false;  // its start came, and no row of it since
  // What a launch that succeeded left in its slot: the table's leading entries, whether its
  // penalty list and its bias are written; and the plan whose launch wrote its next token.
  std::int32_t table_on_device = 0;
  bool penalties_on_device = false;
  bool bias_on_device = false;
  std::uint64_t token_written_by = 0;
};

// How a plan row runs: the slot its token is read from (-1: its tokens are the plan's), the
// slot its sample is written to (-1: none), the slot its block table is kept in, how many of
// the table's entries are there already, the table's length, the slot whose penalty list it
// samples with (-1: none; a penalised row without one is a protocol error its step fails
// with), written from the record first when penalty_init, and the slot whose bias it samples
// with (-1: none), written first when bias_init.
struct row_use {
  // false: a following row with no token to read, or a sequence without a slot; answered with
  // an error
  bool runs = true;
  bool first = false;     // its sequence's first row since its start
  bool logprobs = false;  // it samples, and its request asked for logprobs
  std::int32_t read = -1;
  std::int32_t write = -1;
  std::int32_t table = -1;
  std::int32_t table_keep = 0;
  std::int32_t table_len = 0;
  std::int32_t penalties = -1;
  bool penalty_init = false;
  std::int32_t bias = -1;
  bool bias_init = false;
};

class sequence_table {
 public:
  // slots: the model's token_slots().
  explicit sequence_table(std::int32_t slots);

  // Takes a plan's changes, before anything of it can fail: its ended sequences released, its
  // preempted ones reset, its starts kept, every row's table difference applied. Returns the
  // first protocol error (a row of a sequence with no start, one that keeps more table entries
  // than the record has, a sampling row whose parameters never came), having applied all else.
  std::optional<std::string> apply(const msg::step_plan& plan);
  // How each row of the plan runs (uses[i] for row i). Call once per plan, after apply.
  std::vector<row_use> resolve(const msg::step_plan& plan);
  // The plan (as resolved) was launched: the slots it writes are what the next plan may
  // follow, and its rows' tables, bias and penalty lists are on the device.
  void launched(const msg::step_plan& plan, const std::vector<row_use>& uses);

  const sequence_record* find(msg::request_id seq) const;
  sequence_record* find(msg::request_id seq);
  std::size_t size() const { return seqs_.size(); }
  std::size_t slots_in_use() const { return capacity_ - free_.size(); }

 private:
  void take_start(const msg::sequence_start& s);
  void reset(sequence_record& r);  // its device state goes, its slot back
  std::optional<std::string> apply_row(const msg::plan_row& row);

  std::unordered_map<msg::request_id, sequence_record> seqs_;
  std::size_t capacity_ = 0;
  std::vector<std::int32_t> free_;  // taken from the back
  std::uint64_t plans_ = 0;         // resolved so far: the id of the last
};

}  // namespace courier::actors
