#include "actors/scheduler/step_flight.hpp"

#include <algorithm>

namespace courier::actors {

std::optional<copy_batch> copy_batches::close(std::uint64_t id) {
  const auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return std::nullopt;
  std::optional<copy_batch> b = std::move(it->second);
  in_flight_.erase(it);
  return b;
}

bool copy_batches::waits(std::uint64_t id, msg::request_id seq, std::uint32_t epoch) const {
  const auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return false;
  const auto& seqs = it->second.seqs;
  return std::find(seqs.begin(), seqs.end(), std::make_pair(seq, epoch)) != seqs.end();
}

void copy_batches::host_blocks(std::vector<std::int32_t>& out) const {
  for (const auto& [id, b] : in_flight_) {
    for (const cache::block_id block : b.holds.host.ids()) out.push_back(block.value);
  }
}

void flight::mix(std::int32_t& prefill_tokens, std::int32_t& decode_rows) const {
  prefill_tokens = decode_rows = 0;
  for (const fed_row& r : rows) {
    if (r.decode) {
      ++decode_rows;
    } else {
      prefill_tokens += r.num_tokens;
    }
  }
}

msg::step_summary step_summary_of(const flight& f, const msg::step_result& r, std::int64_t from_ns,
                                  std::int64_t now_ns) {
  msg::step_summary st;
  st.step = f.step;
  st.duration_s = static_cast<double>(now_ns - from_ns) * 1e-9;
  st.forward_s = r.forward_ms * 1e-3;
  st.num_rows = static_cast<std::int32_t>(f.rows.size());
  f.mix(st.num_prefill_tokens, st.num_decode_rows);
  for (const fed_row& row : f.rows) st.num_draft_tokens += row.num_drafts;
  return st;
}

scheduler_observer::row observed_row(const flight& f, const msg::step_result& r, std::size_t i) {
  const fed_row& row = f.rows[i];
  scheduler_observer::row w;
  w.seq = row.seq;
  w.decode = row.decode;
  w.prefill_tokens = row.decode ? 0 : row.num_tokens;
  w.drafts = row.num_drafts;
  const bool rows_ok = r.error == msg::error_code::none && r.rows.size() == f.rows.size();
  if (row.num_drafts > 0 && rows_ok) {
    w.accepted = static_cast<std::int32_t>(r.rows[i].tokens.size()) - 1;
  }
  return w;
}

}  // namespace courier::actors
