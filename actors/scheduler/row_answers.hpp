#pragma once
// What one answered row of a step does to its sequence (scheduler_core::on_result, for each row
// of a step that ran): its fed tokens computed, its snapshot kept or dropped (hybrid_snapshots),
// its prompt logprobs kept; then what it sampled: drafts verified (the blocks that hold only
// rejected ones given back, prompt_lookup told), and tokens taken up to the first that ends the
// request (take_tokens). A prompt's blocks go into the prefix cache, and through to the host
// tier, when its first token is sampled (they serve concurrent requests) and when it ends
// normally (cache_computed). What the outcome means for the request (an event, its end, its
// failure, its queues) is the core's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/scheduler/hybrid_snapshots.hpp"
#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/prompt_lookup.hpp"
#include "actors/scheduler/sequence.hpp"
#include "actors/scheduler/step_flight.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// What an answered row leaves the core to do for its request.
struct row_outcome {
  enum class kind : std::uint8_t {
    nothing,   // a prompt chunk without a sample: goes on
    tokens,    // `tokens` (and their `logprobs`) to send; goes on
    finished,  // ends with `why` after `tokens`
    failed,    // ends with `code` and `message`
  };
  kind what = kind::nothing;
  std::vector<msg::token_id> tokens;
  std::vector<msg::token_logprob> logprobs;
  std::vector<float> embedding;  // an embedding request's (its first token's row)
  msg::finish_reason why = msg::finish_reason::none;
  msg::error_code code = msg::error_code::none;
  std::string message;
};

class row_answers {
 public:
  using namespace_fn = std::function<prefix_namespace(const sequence&)>;
  using clock_fn = std::function<std::int64_t()>;
  // Each reference outlives this; `stats` is the scheduler's, counted into (prefilled and
  // generated tokens, finishes of scored prompts). `ns`: a sequence's prefix namespace; `now`:
  // the scheduler's clock (when tokens arrive); `write_through`: computed blocks are copied to
  // the host tier's prefix cache as they are cached (cache.host_tier_write_through).
  row_answers(kv_manager& kv, hybrid_snapshots& snaps, prompt_lookup& lookup,
              msg::scheduler_stats& stats, const msg::engine_ready& ready, bool write_through,
              namespace_fn ns, clock_fn now);

  // Row `f` of s answered (`row`: its result, if the engine sent one; its tokens and logprobs
  // are moved out). s's counters are those after the step's bookkeeping (num_in_flight and
  // samples_in_flight already lowered).
  row_outcome answer(sequence& s, const fed_row& f, msg::row_result* row);
  // s's computed whole blocks into the prefix cache (and written through), a hybrid's
  // snapshots kept: at its first token, at a normal end, when it is preempted.
  void cache_computed(sequence& s);

 private:
  row_outcome sampled(sequence& s, const fed_row& f, msg::row_result& row);
  row_outcome take(sequence& s, msg::row_result& row);

  kv_manager& kv_;
  hybrid_snapshots& snaps_;
  prompt_lookup& lookup_;
  msg::scheduler_stats& stats_;
  const msg::engine_ready& ready_;
  bool write_through_;
  namespace_fn ns_;
  clock_fn now_;
};

}  // namespace courier::actors
