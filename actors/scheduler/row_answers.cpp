#include "actors/scheduler/row_answers.hpp"

#include <algorithm>
#include <utility>

#include "actors/scheduler/sequence_events.hpp"

namespace courier::actors {

namespace {

row_outcome failure(msg::error_code code, std::string message) {
  row_outcome o;
  o.what = row_outcome::kind::failed;
  o.code = code;
  o.message = std::move(message);
  return o;
}

}  // namespace

row_answers::row_answers(kv_manager& kv, hybrid_snapshots& snaps, prompt_lookup& lookup,
                         msg::scheduler_stats& stats, const msg::engine_ready& ready,
                         bool write_through, namespace_fn ns, clock_fn now)
    : kv_(kv),
      snaps_(snaps),
      lookup_(lookup),
      stats_(stats),
      ready_(ready),
      write_through_(write_through),
      ns_(std::move(ns)),
      now_(std::move(now)) {}

row_outcome row_answers::answer(sequence& s, const fed_row& f, msg::row_result* row) {
  // A row with drafts counts its fed token here and its accepted drafts in sampled().
  s.num_computed += f.num_tokens - f.num_drafts;
  const auto all = static_cast<std::size_t>(f.num_drafts) + 1;  // every draft stood
  snaps_.row_answered(s, f.restores, f.snapshot,
                      f.num_drafts == 0 || (row && row->error == msg::error_code::none &&
                                            row->tokens.size() == all));
  if (s.state == seq_state::prefilling) {
    stats_.prefilled_tokens += static_cast<std::uint64_t>(f.num_tokens);
  }
  if (row) {
    for (auto& lp : row->prompt_logprobs) s.prompt_logprobs.push_back(std::move(lp));
  }
  if (!f.sample) {
    row_outcome o;
    if (s.req.max_tokens == 0 && s.num_computed == s.num_prompt) {  // scored: done
      ++stats_.num_finished;
      o.what = row_outcome::kind::finished;
      o.why = msg::finish_reason::length;
    }
    return o;
  }
  if (row && row->error != msg::error_code::none) return failure(row->error, row->message);
  if (!row || row->tokens.empty()) {
    return failure(msg::error_code::engine_failure, "the engine returned no token");
  }
  return sampled(s, f, *row);
}

// A sampling row's tokens: the first makes s decode (its prompt's blocks cached); accepted
// drafts are computed, the blocks of rejected ones given back.
row_outcome row_answers::sampled(sequence& s, const fed_row& f, msg::row_result& row) {
  const bool first = s.state == seq_state::prefilling;
  s.state = seq_state::decoding;
  if (first) cache_computed(s);  // the prompt's blocks serve concurrent requests
  const std::int32_t k = f.num_drafts;
  if (k > 0) {
    const auto accepted = static_cast<std::int32_t>(row.tokens.size()) - 1;
    if (accepted > k) {
      return failure(msg::error_code::engine_failure,
                     "the engine accepted more drafts than sent");
    }
    s.num_computed += accepted;
    const std::int32_t bs = kv_.block_size();
    kv_.truncate(s.blocks, (s.num_computed + bs - 1) / bs);
    lookup_.verified(s, k, accepted, f.source);
  }
  return take(s, row);
}

// A row's tokens (one, or accepted drafts plus one) up to the first that ends the request.
row_outcome row_answers::take(sequence& s, msg::row_result& row) {
  const tokens_taken t = take_tokens(s, row.tokens, ready_.eos_token_ids);
  row_outcome o;
  o.tokens.assign(row.tokens.begin(), row.tokens.begin() + static_cast<std::ptrdiff_t>(t.count));
  s.tokens.insert(s.tokens.end(), o.tokens.begin(), o.tokens.end());
  stats_.generated_tokens += t.count;
  if (t.count > 0) s.timing.tokens_at(now_());
  o.logprobs = std::move(row.logprobs);
  if (o.logprobs.size() > t.count) o.logprobs.resize(t.count);
  o.embedding = std::move(row.embedding);
  o.why = t.why;
  if (t.why == msg::finish_reason::none) {
    o.what = row_outcome::kind::tokens;
  } else {
    ++stats_.num_finished;
    o.what = row_outcome::kind::finished;
  }
  return o;
}

void row_answers::cache_computed(sequence& s) {
  if (!kv_.caching()) return;
  const prefix_namespace ns = ns_(s);
  const std::int32_t full = s.num_computed / kv_.block_size();
  kv_.insert(ns, s.tokens, s.blocks, full, s.num_in_cache);
  if (write_through_) {  // from the blocks this insert stored on
    kv_.host().write_through(ns, s.tokens, s.blocks, s.num_in_cache / kv_.block_size(), full);
  }
  s.num_in_cache = std::max(s.num_in_cache, full * kv_.block_size());
  if (snaps_.on()) snaps_.keep(s, ns);
}

}  // namespace courier::actors
