#include "actors/scheduler/sequence_events.hpp"

#include <algorithm>
#include <utility>

namespace courier::actors {

namespace {

void count_use(const sequence& s, msg::token_event& e) {
  e.use.prompt_tokens = s.num_prompt;
  e.use.completion_tokens = s.num_output();
  e.use.cached_tokens = s.cached_tokens;
}

bool contains(const std::vector<msg::token_id>& ids, msg::token_id t) {
  return std::find(ids.begin(), ids.end(), t) != ids.end();
}

}  // namespace

tokens_taken take_tokens(const sequence& s, const std::vector<msg::token_id>& sampled,
                         const std::vector<msg::token_id>& eos_ids) {
  tokens_taken t;
  auto length = s.tokens.size();
  for (const msg::token_id token : sampled) {
    ++t.count;
    ++length;
    if ((!s.req.ignore_eos && contains(eos_ids, token)) || contains(s.req.stop_token_ids, token)) {
      t.why = msg::finish_reason::stop;
    } else if (static_cast<std::int64_t>(length) >= s.max_total) {
      t.why = msg::finish_reason::length;
    }
    if (t.why != msg::finish_reason::none) break;
  }
  return t;
}

std::vector<msg::token_id> end_tokens_of(const msg::submit& s,
                                         const std::vector<msg::token_id>& eos_ids) {
  std::vector<msg::token_id> ends;
  const auto add = [&](msg::token_id t) {
    if (!contains(ends, t)) ends.push_back(t);
  };
  if (!s.ignore_eos) std::for_each(eos_ids.begin(), eos_ids.end(), add);
  std::for_each(s.stop_token_ids.begin(), s.stop_token_ids.end(), add);
  return ends;
}

msg::token_event tokens_event(sequence& s, std::vector<msg::token_id> tokens,
                              std::vector<msg::token_logprob> lp, msg::finish_reason why) {
  msg::token_event e;
  e.id = s.req.id;
  e.tokens = std::move(tokens);
  if (s.req.sampling.logprobs >= 0) e.logprobs = std::move(lp);
  e.finish = why;
  if (s.wants_prompt_logprobs() && !s.prompt_logprobs_sent) {
    e.prompt_logprobs = std::move(s.prompt_logprobs);
    s.prompt_logprobs_sent = true;
  }
  count_use(s, e);
  return e;
}

msg::token_event error_event(const sequence& s, msg::error_code code, std::string message) {
  msg::token_event e;
  e.id = s.req.id;
  e.finish = msg::finish_reason::error;
  e.error = code;
  e.message = std::move(message);
  count_use(s, e);
  return e;
}

msg::request_summary summary_of(sequence& s, msg::finish_reason why, msg::error_code code,
                                std::int64_t now_ns) {
  msg::request_summary q;
  q.finish = why;
  q.error = code;
  q.prompt_tokens = s.num_prompt;
  q.generation_tokens = s.num_output();
  q.cached_tokens = s.cached_tokens;
  s.timing.summarize(q, now_ns);
  q.adapter = s.req.adapter;
  return q;
}

msg::token_event refusal_event(const msg::submit& s, msg::error_code code, std::string why) {
  msg::token_event e;
  e.id = s.id;
  e.finish = msg::finish_reason::error;
  e.error = code;
  e.message = std::move(why);
  e.use.prompt_tokens = static_cast<std::int32_t>(s.prompt.size());
  return e;
}

msg::request_summary refusal_summary(const msg::submit& s, msg::error_code code,
                                     std::int64_t now_ns) {
  msg::request_summary q;
  q.finish = msg::finish_reason::error;
  q.error = code;
  q.prompt_tokens = static_cast<std::int32_t>(s.prompt.size());
  if (s.arrival_ns > 0) q.e2e_s = static_cast<double>(now_ns - s.arrival_ns) * 1e-9;
  return q;
}

}  // namespace courier::actors
