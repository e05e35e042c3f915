#include "actors/engine/sequence_table.hpp"

#include <algorithm>
#include <utility>

namespace courier::actors {

sequence_table::sequence_table(std::int32_t slots)
    : capacity_(static_cast<std::size_t>(slots > 0 ? slots : 0)) {
  for (std::int32_t s = slots - 1; s >= 0; --s) free_.push_back(s);  // slot 0 first
}

void sequence_table::reset(sequence_record& r) {
  if (r.slot >= 0) free_.push_back(r.slot);
  r.started = false;
  r.start = {};
  r.table.clear();
  r.slot = -1;
  r.first_row = false;
  r.table_on_device = 0;
  r.penalties_on_device = false;
  r.bias_on_device = false;
  r.token_written_by = 0;
}

void sequence_table::take_start(const msg::sequence_start& s) {
  sequence_record& r = seqs_[s.seq];
  reset(r);  // a start while started replaces the device state too
  r.start = s;
  if (s.carries_sampling) {
    msg::sampling_params& p = r.start.sampling;
    r.bias_tokens = std::move(p.logit_bias_tokens);
    r.bias_values = std::move(p.logit_bias_values);
    p.logit_bias_tokens.clear();
    p.logit_bias_values.clear();
    r.sampling = std::move(p);
    r.has_sampling = true;
    r.grammar.reset();
  }
  r.start.sampling = {};
  r.started = true;
  r.first_row = true;
  if (!free_.empty()) {  // never empty: at most half the slots run
    r.slot = free_.back();
    free_.pop_back();
  }
}

std::optional<std::string> sequence_table::apply_row(const msg::plan_row& row) {
  auto it = seqs_.find(row.seq);
  if (it == seqs_.end() || !it->second.started) {
    return "step plan: sequence " + std::to_string(row.seq) + " has a row and no start";
  }
  sequence_record& r = it->second;
  std::optional<std::string> error;
  if (row.keep_blocks < 0 || static_cast<std::size_t>(row.keep_blocks) > r.table.size()) {
    error = "step plan: sequence " + std::to_string(row.seq) + " keeps " +
            std::to_string(row.keep_blocks) + " blocks of its table, the engine holds " +
            std::to_string(r.table.size());
  } else {
    r.table.resize(static_cast<std::size_t>(row.keep_blocks));
    r.table.insert(r.table.end(), row.new_blocks.begin(), row.new_blocks.end());
    // Entries past those the row keeps changed: written again.
    r.table_on_device = std::min(r.table_on_device, row.keep_blocks);
  }
  if (row.sample && !r.has_sampling && !error) {
    error = "step plan: sequence " + std::to_string(row.seq) +
            " samples, and no start has carried its sampling parameters";
  }
  return error;
}

std::optional<std::string> sequence_table::apply(const msg::step_plan& plan) {
  for (const msg::request_id id : plan.ended) {
    auto it = seqs_.find(id);
    if (it == seqs_.end()) continue;
    reset(it->second);
    seqs_.erase(it);
  }
  for (const msg::request_id id : plan.preempted) {
    if (sequence_record* r = find(id)) reset(*r);
  }
  for (const msg::sequence_start& s : plan.starts) take_start(s);
  std::optional<std::string> error;
  for (const msg::plan_row& row : plan.rows) {
    std::optional<std::string> e = apply_row(row);
    if (e && !error) error = std::move(e);
  }
  return error;
}

std::vector<row_use> sequence_table::resolve(const msg::step_plan& plan) {
  const std::uint64_t before = plans_++;
  std::vector<row_use> uses(plan.rows.size());
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const msg::plan_row& row = plan.rows[i];
    row_use& use = uses[i];
    sequence_record* r = find(row.seq);
    if (!r || !r->started) {  // a protocol error apply() reported
      use.runs = false;
      continue;
    }
    use.first = std::exchange(r->first_row, false);
    use.logprobs = row.sample && r->sampling.logprobs >= 0;
    // Its table is kept in its slot: a sequence without one (more running than the model has
    // slots for, which the scheduler's max_seqs rules out) does not run.
    use.runs = r->slot >= 0 && (!row.follows || (r->token_written_by == before &&
                                                   before != 0 && row.tokens.size() == 1));
    if (!use.runs) continue;
    if (row.follows) use.read = r->slot;
    if (row.sample && row.num_drafts == 0) use.write = r->slot;
    use.table = r->slot;
    use.table_len = static_cast<std::int32_t>(r->table.size());
    use.table_keep = std::min(r->table_on_device, use.table_len);
    if (row.sample && !r->bias_tokens.empty()) {
      use.bias = r->slot;
      use.bias_init = !r->bias_on_device;
    }
    if (row.sample && msg::penalised(r->sampling)) {
      use.penalties = r->slot;
      use.penalty_init = !r->penalties_on_device;
    }
  }
  return uses;
}

void sequence_table::launched(const msg::step_plan& plan, const std::vector<row_use>& uses) {
  for (std::size_t i = 0; i < plan.rows.size() && i < uses.size(); ++i) {
    const row_use& u = uses[i];
    sequence_record* r = find(plan.rows[i].seq);
    if (!u.runs || !r) continue;
    if (u.write >= 0) r->token_written_by = plans_;
    if (u.table >= 0) r->table_on_device = u.table_len;
    if (u.penalty_init) r->penalties_on_device = true;
    if (u.bias_init) r->bias_on_device = true;
  }
}

const sequence_record* sequence_table::find(msg::request_id seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? nullptr : &it->second;
}

sequence_record* sequence_table::find(msg::request_id seq) {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? nullptr : &it->second;
}

}  // namespace courier::actors
