// scheduler_core, the way in and the early ways out: validating and queueing submits (one, or a
// request's choices together), rejections, cancels and stop-string finishes.
#include <fmt/format.h>

#include <algorithm>

#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/sequence_events.hpp"
#include "actors/scheduler/submit_checks.hpp"

namespace courier::actors {

// Why this one submit cannot be queued, whatever the load; empty when it can.
std::string scheduler_core::refusal(const msg::submit& s, msg::error_code& code) const {
  const std::int64_t capacity = static_cast<std::int64_t>(kv_.num_blocks()) * kv_.block_size();
  std::string why = submit_refusal(s, ready_, capacity, code);
  if (why.empty() && seqs_.count(s.id)) {
    code = msg::error_code::invalid_request;
    why = fmt::format("request id {} is already in use", s.id);
  }
  if (why.empty() && !s.sampling.grammar.wire_gbnf.empty() && !s.sampling.grammar) {
    code = msg::error_code::invalid_request;  // sent to the scheduler, not its replica gate
    why = "a grammar came from another machine uncompiled (a replica compiles it at its gate)";
  }
  if (why.empty() && !s.adapter.empty() && !loras_.known(s.adapter)) {
    code = msg::error_code::invalid_request;
    why = fmt::format("the engine has no LoRA adapter '{}'", s.adapter);
  }
  return why;
}

void scheduler_core::reject(const msg::submit& s, msg::error_code code, const std::string& why,
                            std::vector<outgoing_event>& out) {
  ++stats_.num_failed;
  out.push_back({s.reply_to, refusal_event(s, code, why)});
  report_.request_ended(refusal_summary(s, code, now()));
}

void scheduler_core::enqueue(msg::submit s) {
  // The end tokens min_tokens holds back, for the engine's sampler (submit_refusal bounded them).
  if (s.sampling.min_tokens > 0) s.sampling.end_tokens = end_tokens_of(s, ready_.eos_token_ids);
  std::unique_ptr<sequence> seq =
      make_sequence(std::move(s), seed_state_, ready_.max_model_len, now());
  const msg::request_id id = seq->req.id;
  const msg::request_id group = seq->req.group;
  report_.changed();
  stats_.prompt_tokens += static_cast<std::uint64_t>(seq->num_prompt);
  sequence& queued = *seqs_.emplace(id, std::move(seq)).first->second;
  if (!prefetch(queued)) waiting_.push(id, group);
}

void scheduler_core::submit(msg::submit s, std::vector<outgoing_event>& out) {
  std::vector<msg::submit> one;
  one.push_back(std::move(s));
  (void)submit_batch(std::move(one), out);
}

msg::submit_ack scheduler_core::submit_batch(std::vector<msg::submit> choices,
                                             std::vector<outgoing_event>& out) {
  msg::submit_ack ack;
  if (!choices.empty()) ack.group = choices.front().id;
  ack.message = batch_refusal(
      choices, [this](const msg::submit& c, msg::error_code& code) { return refusal(c, code); },
      static_cast<std::int64_t>(waiting_.size()), opts_.max_waiting, ack.error);
  if (ack.error != msg::error_code::none) {
    for (const msg::submit& c : choices) reject(c, ack.error, ack.message, out);
    return ack;
  }
  for (msg::submit& c : choices) {
    if (c.group == 0) c.group = ack.group;
    enqueue(std::move(c));
  }
  return ack;
}

void scheduler_core::cancel(msg::request_id id, std::vector<outgoing_event>& out,
                            msg::cancel_reason why) {
  sequence* s = find(id);
  if (!s) return;
  switch (why) {
    case msg::cancel_reason::client_gone:
      ++stats_.num_cancelled;
      finish(*s, msg::finish_reason::cancelled, {}, {}, out);
      return;
    case msg::cancel_reason::stop_string:
      // What it computed is as good as at an EOS: cached, stored for lookup, counted as a stop.
      ++stats_.num_finished;
      finish(*s, msg::finish_reason::stop, {}, {}, out);
      return;
  }
}

}  // namespace courier::actors
