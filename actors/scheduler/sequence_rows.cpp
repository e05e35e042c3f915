#include "actors/scheduler/sequence_rows.hpp"

#include <algorithm>
#include <utility>

namespace courier::actors {

std::vector<msg::penalty_entry> penalty_list(const sequence& s) {
  std::vector<std::pair<msg::token_id, std::int32_t>> at;  // (token, position)
  at.reserve(s.tokens.size());
  for (std::size_t i = 0; i < s.tokens.size(); ++i) {
    at.emplace_back(s.tokens[i], static_cast<std::int32_t>(i));
  }
  std::sort(at.begin(), at.end());
  std::vector<msg::penalty_entry> list;
  for (const auto& [token, pos] : at) {
    if (list.empty() || list.back().token != token) list.push_back({token, 0, false});
    if (pos < s.num_prompt) {
      list.back().in_prompt = true;
    } else {
      ++list.back().output_count;
    }
  }
  return list;
}

msg::plan_row make_row(sequence& s, std::int32_t n, bool follows) {
  msg::plan_row r;
  r.seq = s.req.id;
  const std::int32_t start = s.next_pos();
  if (follows) {
    r.tokens.assign(1, 0);
    r.follows = true;
  } else {
    r.tokens.assign(s.tokens.begin() + start, s.tokens.begin() + start + n);
  }
  r.start_pos = start;
  // Only what changed since the engine's copy was last brought up to date: usually nothing.
  const std::size_t keep = s.blocks.synced_prefix();
  r.keep_blocks = static_cast<std::int32_t>(keep);
  for (std::size_t i = keep; i < s.blocks.size(); ++i) r.new_blocks.push_back(s.blocks[i].value);
  s.blocks.mark_synced();
  r.sample =
      follows || (start + n == static_cast<std::int32_t>(s.tokens.size()) && s.req.max_tokens > 0);
  if (s.wants_prompt_logprobs() && !s.prompt_logprobs_sent && !follows) {
    // Position p's target is prompt token p + 1; positions already collected are skipped.
    const auto have = static_cast<std::int32_t>(s.prompt_logprobs.size());
    bool any = false;
    for (std::int32_t i = 0; i < n; ++i) {
      const std::int32_t pos = start + i;
      const bool want = pos >= have && pos + 1 < s.num_prompt;
      r.prompt_targets.push_back(want ? s.tokens[pos + 1] : msg::no_token);
      any = any || want;
    }
    if (!any) r.prompt_targets.clear();
  }
  if (r.sample) r.draw_index = static_cast<std::uint64_t>(s.num_output() + s.samples_in_flight);
  return r;
}

msg::sequence_start make_start(sequence& s) {
  msg::sequence_start st;
  st.seq = s.req.id;
  st.state_slot = s.recurrent.index();
  st.lora_slot = s.lora.index();
  st.state_copied = std::exchange(s.state_copied, false);
  // The first row resumes from the pinned snapshot.
  if (s.restore_slot >= 0) st.state_restore = std::exchange(s.restore_slot, -1);
  if (!s.sampling_sent) {  // the engine keeps them from here until the sequence ends
    st.sampling = s.req.sampling;
    st.carries_sampling = true;
    s.sampling_sent = true;
  }
  // Kept and counted on the device from its first sampling row.
  if (s.penalised()) st.penalties = penalty_list(s);
  s.started = true;
  return st;
}

}  // namespace courier::actors
