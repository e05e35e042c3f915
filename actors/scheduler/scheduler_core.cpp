#include "actors/scheduler/scheduler_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "actors/scheduler/sequence_events.hpp"
#include "actors/telemetry/trace.hpp"

namespace courier::actors {

namespace {

// A model with recurrent state (a hybrid's Mamba-2 layers) resumes a sequence from cached KV
// blocks only where a snapshot of that state is kept (no snapshot rows: no prefix reuse), and
// verifies drafts only with draft state rows to keep its state after each draft position in
// (rejected drafts must not stay in its state): a step's drafts are at most those rows.
scheduler_options for_model(scheduler_options o, const msg::engine_ready& ready) {
  if (ready.recurrent) {
    o.prefix_caching = o.prefix_caching && ready.snapshot_slots > 0;
    o.lookup.enabled = o.lookup.enabled && ready.draft_state_rows > 0;
  }
  return o;
}

}  // namespace

scheduler_core::scheduler_core(scheduler_options opts, const msg::engine_ready& ready)
    : opts_(for_model(opts, ready)),
      ready_(ready),
      kv_(ready.num_kv_blocks, ready.block_size, opts_.prefix_caching,
          snapshot_setup_for(ready, opts_.ssm_eviction_alpha), ready.host_kv_blocks,
          std::move(opts_.disk)),
      states_(ready.recurrent ? ready.state_slots : 0),
      loras_(ready),
      seed_state_(opts.seed),
      snaps_(kv_, stats_, opts_.ssm_checkpoint_tokens, opts_.ssm_decode_snapshots),
      lookup_(opts_.lookup, stats_),
      disk_(kv_, stats_, ready.recurrent),
      admission_(kv_, snaps_, copies_, stats_, report_, ready.recurrent),
      preempted_kv_(kv_, stats_, ready_, opts_.preemption),
      answers_(kv_, snaps_, lookup_, stats_, ready_, opts_.host_write_through,
               [this](const sequence& s) { return namespace_of(s); }, [this] { return now(); }) {
  stats_.num_total_blocks = ready.num_kv_blocks;
  report_.set_block_bytes(ready.kv_block_bytes);
  // What the caches hold already (the disk tier's blocks a previous run left) first.
  if (opts_.cache_events) kv_.record_cache_events(&cache_events_);
}

void scheduler_core::flush_cache_events() {
  if (!opts_.cache_events || cache_events_.empty()) return;
  cache::cache_event_log out;
  out.swap(cache_events_);
  opts_.cache_events(std::move(out));
}

scheduler_core::~scheduler_core() = default;

sequence* scheduler_core::find(msg::request_id id) {
  auto it = seqs_.find(id);
  return it == seqs_.end() ? nullptr : it->second.get();
}

cache::lookup_scope scheduler_core::scope_of(const sequence& s) const {
  return lookup_scope_of(ready_, loras_.cache_key(s.req.adapter), s.req.tenant);
}

prefix_namespace scheduler_core::namespace_of(const sequence& s) const {
  return {loras_.cache_key(s.req.adapter), opts_.isolate_by_tenant ? s.req.tenant : std::string()};
}

std::int64_t scheduler_core::now() const {
  return opts_.clock ? opts_.clock() : telemetry::now_ns();  // the trace's clock: spans line up
}

bool scheduler_core::ensure_blocks(sequence& s, std::int32_t num_tokens) {
  const std::int32_t bs = kv_.block_size();
  const std::int32_t need =
      (num_tokens + bs - 1) / bs - static_cast<std::int32_t>(s.blocks.size());
  if (need <= 0) return true;
  auto fresh = kv_.allocate(need);
  if (!fresh) return false;
  s.blocks.append(std::move(*fresh));
  return true;
}

// The budget a decoding sequence's row may have (itself and up to one less drafts): within the
// step's tokens and its draft state rows, and for a hybrid taking tail snapshots, ending no
// further than the next block boundary, where the snapshot is taken (kept only if every draft
// stands).
std::int32_t scheduler_core::draft_room(const sequence& s, std::int32_t budget,
                                        std::int32_t draft_rows) const {
  std::int32_t room = std::min(budget, draft_rows + 1);
  if (snapshots_on() && opts_.ssm_decode_snapshots) {
    const std::int32_t bs = kv_.block_size(), next = s.next_pos() + 1;
    room = std::min(room, (next + bs - 1) / bs * bs - next + 1);
  }
  return room;
}

// Whether a sequence whose token is still being sampled gets a row that follows it now: not
// after a row with drafts (how many stand is unknown), not when that token ends the request by
// length. Penalised ones may: the engine counts that token into their penalty list on the
// device before the row samples.
// A sequence due to search for drafts waits instead (drafts need its last token), so prompt
// lookup keeps working: while its searches pause, its rows follow.
bool scheduler_core::can_follow(const sequence& s) const {
  return opts_.overlap && s.samples_in_flight == 1 && !s.drafts_in_flight && !lookup_.due(s) &&
         static_cast<std::int32_t>(s.tokens.size()) + 1 < s.max_total;
}

void scheduler_core::add_row(step_builder& b, sequence& s, std::int32_t n, std::int32_t drafts,
                             cache::proposal_source source, bool follows) {
  msg::plan_row row = make_row(s, n, follows);
  row.decode = follows || s.state == seq_state::decoding;
  if (drafts > 0) row.num_drafts = drafts;  // make_row's block table already covers them
  b.fed.push_back({s.req.id, n + drafts, row.sample, row.decode, drafts, source, s.epoch});
  if (!s.started) {
    b.p.starts.push_back(make_start(s));
    b.fed.back().restores = b.p.starts.back().state_restore >= 0;  // pinned until answered
  }
  b.fed.back().snapshot = snaps_.snapshot_row(s, row, n + drafts);
  s.num_in_flight += n + drafts;
  if (row.sample) ++s.samples_in_flight;
  s.drafts_in_flight = drafts > 0;
  b.budget -= n + drafts;
  b.p.rows.push_back(std::move(row));
}

std::optional<msg::step_plan> scheduler_core::plan(std::vector<outgoing_event>& out) {
  (void)out;
  if (flights_.size() >= (opts_.overlap ? 2u : 1u)) return std::nullopt;
  step_builder b;
  b.budget = opts_.max_batched_tokens;
  // A recurrent model's drafts each take a draft state row of the step.
  b.draft_rows = ready_.recurrent ? ready_.draft_state_rows : b.budget;
  plan_decodes(b);
  plan_prefills(b);
  plan_admissions(b);
  // Spills wait for the next plan with rows; copies back from the host tier go now.
  if (b.p.rows.empty() && kv_.host().queued_async_copies().copies.empty()) return std::nullopt;
  return finish_plan(b);
}

scheduler_effects scheduler_core::take_effects(std::vector<outgoing_event> events) {
  scheduler_effects fx;
  for (;;) {
    planned_step step;
    step.start_ns = now();
    std::optional<msg::step_plan> p = plan(events);
    if (!p) break;
    step.end_ns = now();
    flights_.back().mix(step.prefill, step.decode);
    step.plan = std::move(*p);
    fx.steps.push_back(std::move(step));
  }
  while (std::optional<msg::disk_batch> b = take_disk_batch()) fx.disk.push_back(std::move(*b));
  flush_cache_events();
  for (std::string& name : take_unloaded()) {
    fx.lora.push_back({msg::lora_change::unload, std::move(name), ""});
  }
  for (msg::lora_change& c : take_lora_host_changes()) fx.lora.push_back(std::move(c));
  fx.report = take_report();
  fx.events = std::move(events);
  return fx;
}

// 1. Every decoding sequence gets its row; a missing block is found by evicting cached blocks,
//    then by preempting the most recently started sequence. A sequence whose next token a step
//    in flight samples gets a row that follows it, if blocks are free.
void scheduler_core::plan_decodes(step_builder& b) {
  draining_.clear();  // the last plan's
  for (std::size_t i = 0; i < running_.size() && b.budget > 0; ++i) {
    sequence& s = *seqs_.at(running_[i]);
    if (draining(s)) continue;
    if (s.samples_in_flight > 0) {
      if (can_follow(s) && ensure_blocks(s, s.next_pos() + 1)) {
        s.drafts.skip();  // a decode step without a search
        ++stats_.follow_rows;
        add_row(b, s, 1, 0, cache::proposal_source::none, true);
      }
      continue;
    }
    if (s.state != seq_state::decoding) continue;
    cache::proposal_source source = cache::proposal_source::none;
    std::vector<msg::token_id> drafts =
        lookup_.propose(s, [&] { return scope_of(s); }, draft_room(s, b.budget, b.draft_rows),
                        source);
    const auto k = static_cast<std::int32_t>(drafts.size());
    if (k > 0 && ensure_blocks(s, s.next_pos() + 1 + k)) {
      b.draft_rows -= k;
      add_row(b, s, 1, k, source, false);
      b.p.rows.back().tokens.insert(b.p.rows.back().tokens.end(), drafts.begin(), drafts.end());
      continue;
    }
    // Drafts never cost another sequence its blocks: without room for them, a plain row.
    if (!make_room(s, s.next_pos() + 1, nullptr)) {
      if (!s.running()) break;  // s itself was the newest: it waits again
      continue;  // a victim drains first: s waits a step
    }
    add_row(b, s, 1, 0, cache::proposal_source::none, false);
  }
}

// 2. Sequences part-way through their prompt continue, oldest first; a missing block is found
//    as for decoding (else, with every running sequence part-way through a prompt and no block
//    free, none would ever go on).
void scheduler_core::plan_prefills(step_builder& b) {
  for (std::size_t i = 0; i < running_.size() && b.budget > 0; ++i) {
    sequence& s = *seqs_.at(running_[i]);
    if ((s.state != seq_state::prefilling && s.state != seq_state::resuming) ||
        s.samples_in_flight > 0 || draining(s)) {
      continue;
    }
    const std::int32_t n = snaps_.cut_at_checkpoint(
        s, std::min(b.budget, static_cast<std::int32_t>(s.tokens.size()) - s.next_pos()));
    if (n <= 0) continue;  // a prompt scored without sampling, all of it in flight
    // Victims of those without a row in this plan (decode rows came first), or s itself.
    if (!make_room(s, s.next_pos() + n, &b.fed)) {
      if (!s.running()) break;  // s itself was the newest: it waits again
      continue;
    }
    // One resuming may hold more than this chunk needs (taken at its admission).
    kv_.truncate(s.blocks, (s.next_pos() + n + kv_.block_size() - 1) / kv_.block_size());
    add_row(b, s, n, 0, cache::proposal_source::none, false);
  }
}

// 3. Waiting sequences are admitted while tokens, slots and blocks last: preempted ones first,
//    then round-robin across groups (waiting_queue), so one large request cannot starve a later
//    small one. One waiting for its adapter's slot lets those behind it go ahead (within
//    kLoraLookahead) when they need no new slot (lora_admission::gate); nothing passes one
//    waiting for blocks or a state slot.
void scheduler_core::plan_admissions(step_builder& b) {
  constexpr std::size_t kLoraLookahead = 64;
  lora_admission::pass pass;
  std::size_t passed = 0;  // the first `passed` waiting sequences wait for an adapter's slot
  while (b.budget > 0 && static_cast<std::int32_t>(running_.size()) < opts_.max_num_seqs) {
    const std::vector<msg::request_id> next = waiting_.first(passed + 1);
    if (next.size() <= passed) break;
    const msg::request_id id = next[passed];
    sequence& s = *seqs_.at(id);
    // Blocks of its prompt that went to disk while it waited: read first (it queues again when
    // they are in host memory), at most twice over its life.
    if (s.swapped.empty() && s.disk_loads < 2 && prefetch(s)) {
      waiting_.take(id);
      continue;
    }
    // A hybrid's sequence runs only with a recurrent-state slot, one with an adapter only with
    // its adapter in a slot of the engine's pool.
    if (ready_.recurrent && states_.num_free() == 0) break;
    if (!loras_.gate(s.req.adapter, pass)) {
      if (++passed == kLoraLookahead) break;
      continue;
    }
    std::int32_t n = 0;
    if (ready_.recurrent) s.recurrent = *states_.take();  // admit may copy a state into it
    if (!admission_.admit(s, namespace_of(s), b.budget, n)) {
      s.recurrent.reset();
      break;
    }
    if (passed > 0) ++stats_.lora_passed;
    start_running(s);
    if (n > 0) add_row(b, s, n, 0, cache::proposal_source::none, false);
  }
}

// An admitted sequence: its adapter's slot held, its first admission counted, running.
void scheduler_core::start_running(sequence& s) {
  if (!s.req.adapter.empty()) s.lora = loras_.acquire(s.req.adapter);
  if (!s.admitted_once) {
    s.admitted_once = true;
    s.timing.scheduled_ns = now();
    report_.prompt_admitted(static_cast<std::uint64_t>(s.num_prompt));
    s.cached_tokens = s.num_computed;
    stats_.cached_tokens += static_cast<std::uint64_t>(s.num_computed);
  }
  waiting_.take(s.req.id);
  s.state = s.copy_batch != 0 ? seq_state::copying_in : seq_state::prefilling;
  s.admit_order = next_admit_++;
  running_.push_back(s.req.id);
}

// The plan's copies, slot loads, ended and preempted sequences, and its flight.
msg::step_plan scheduler_core::finish_plan(step_builder& b) {
  msg::step_plan& p = b.p;
  p.block_copies = kv_.host().take_block_copies();
  if (!kv_.host().queued_async_copies().copies.empty()) {
    ++stats_.copy_batches;
    copy_batch f{kv_.host().take_async_copies(), {}};
    p.async_copies = f.holds.copies;
    for (const msg::request_id id : running_) {
      const sequence& s = *seqs_.at(id);
      if (s.copy_batch == copies_.next()) f.seqs.emplace_back(id, s.epoch);
    }
    p.copy_batch = copies_.open(std::move(f));
  }
  for (const msg::request_id id : swapped_out_) {  // back only once this step has answered
    sequence* s = find(id);
    if (s && !s->swapped.empty()) s->state = seq_state::swapping_out;
  }
  p.state_copies = kv_.snapshots().take_state_copies();
  p.lora_loads = loras_.take_loads();
  p.ended = std::move(ended_);
  ended_.clear();
  p.preempted = std::move(preempted_);
  preempted_.clear();
  p.step = next_step_++;
  ++stats_.num_steps;
  flights_.push_back(flight{p.step, now(), std::move(b.fed), !p.state_copies.empty(),
                            std::exchange(swapped_out_, {}), kv_.host().take_spilled(),
                            kv_.host().take_copy_holds(), p.lora_loads,
                            kv_.snapshots().take_detached()});
  report_.changed();
  return std::move(p);
}

void scheduler_core::on_result(msg::step_result r, std::vector<outgoing_event>& out) {
  // The engine answers in step order; anything else is not an answer to a step in flight.
  if (flights_.empty() || flights_.front().step != r.step) return;
  const flight done = std::move(flights_.front());
  flights_.pop_front();
  note_step(done, r, now());
  settle_copies(done, r.error == msg::error_code::none);
  for (std::size_t i = 0; i < done.rows.size(); ++i) {
    const fed_row& f = done.rows[i];
    sequence* s = find(f.seq);
    if (!s || s->epoch != f.epoch) continue;  // cancelled or preempted meanwhile
    s->num_in_flight -= f.num_tokens;
    // It went on: it may be preempted again from here.
    if (s->state == seq_state::resuming) s->state = seq_state::prefilling;
    if (f.sample) --s->samples_in_flight;
    if (f.num_drafts > 0) s->drafts_in_flight = false;
    if (r.error != msg::error_code::none) {
      fail(*s, r.error, "the engine failed a step: " + r.message, out);
      continue;
    }
    row_answered(*s, f, i < r.rows.size() ? &r.rows[i] : nullptr, out);
  }
}

// What an answered step's copies and loads leave: on a failure no snapshot is trusted (its
// spills and promotions may not have run) and its adapter slots are loaded again when next
// needed; its spills may be promoted from now on (or are dropped), the snapshots it detached
// restored; its swaps out confirmed, or given up for recomputing.
void scheduler_core::settle_copies(const flight& done, bool ok) {
  if (!ok && done.copies) kv_.snapshots().forget_snapshots();
  if (!ok) loras_.forget(done.lora_loads);
  kv_.host().spilled_answered(done.spilled, ok);
  kv_.snapshots().detached_answered(done.detached, ok);
  for (const msg::request_id id : done.swapped_out) {
    sequence* s = find(id);
    if (s && !s->swapped.empty()) preempted_kv_.swap_answered(*s, ok);
  }
}

// A row of a step that ran: what it did to s (row_answers), then what that means for the request.
void scheduler_core::row_answered(sequence& s, const fed_row& f, msg::row_result* row,
                                  std::vector<outgoing_event>& out) {
  row_outcome o = answers_.answer(s, f, row);
  switch (o.what) {
    case row_outcome::kind::nothing:
      return;
    case row_outcome::kind::tokens:
      out.push_back({s.req.reply_to, tokens_event(s, std::move(o.tokens), std::move(o.logprobs),
                                                  msg::finish_reason::none)});
      out.back().event.embedding = std::move(o.embedding);
      return;
    case row_outcome::kind::finished:
      finish(s, o.why, std::move(o.tokens), std::move(o.logprobs), out);
      out.back().event.embedding = std::move(o.embedding);  // finish's event is the last
      return;
    case row_outcome::kind::failed:
      fail(s, o.code, o.message, out);
      return;
  }
}

void scheduler_core::finish(sequence& s, msg::finish_reason why, std::vector<msg::token_id> tokens,
                            std::vector<msg::token_logprob> lp, std::vector<outgoing_event>& out) {
  // Blocks still being copied: not cached.
  if (s.state == seq_state::copying_in) s.num_computed = s.copy_base;
  if (why != msg::finish_reason::cancelled && why != msg::finish_reason::error) {
    answers_.cache_computed(s);
    // Its tokens may draft for the tenant's later requests (no tenant: not stored).
    if (lookup_.enabled()) lookup_.store(s, scope_of(s));
  }
  out.push_back({s.req.reply_to, tokens_event(s, std::move(tokens), std::move(lp), why)});
  report_.request_ended(summary_of(s, why, msg::error_code::none, now()));
  remove(s.req.id);
}

void scheduler_core::fail(sequence& s, msg::error_code code, const std::string& message,
                          std::vector<outgoing_event>& out) {
  out.push_back({s.req.reply_to, error_event(s, code, message)});
  ++stats_.num_failed;
  report_.request_ended(summary_of(s, msg::finish_reason::error, code, now()));
  remove(s.req.id);
}

void scheduler_core::remove(msg::request_id id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return;
  sequence& s = *it->second;
  if (opts_.observer) opts_.observer->request_ended(id);
  snaps_.drop(s);
  kv_.snapshots().give_back_host_state_row(std::exchange(s.swapped_state, -1));
  kv_.release(s.blocks);
  if (s.admitted_once) ended_.push_back(id);  // a plan carried it: the engine holds its state
  switch (s.state) {
    case seq_state::waiting:
    case seq_state::swapping_out:
      waiting_.erase(id);
      break;
    case seq_state::loading:
      disk_.forget(id);  // its reads go on: their blocks are cached
      break;
    case seq_state::copying_in:
    case seq_state::resuming:
    case seq_state::prefilling:
    case seq_state::decoding:
      running_.erase(std::find(running_.begin(), running_.end(), id));
      break;
  }
  seqs_.erase(it);
}

std::vector<std::int32_t> scheduler_core::block_table(msg::request_id id) const {
  std::vector<std::int32_t> t;
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return t;
  for (cache::block_id b : it->second->blocks.ids()) t.push_back(b.value);
  return t;
}

msg::scheduler_stats scheduler_core::stats() const {
  msg::scheduler_stats s = stats_;
  s.num_waiting = static_cast<std::int32_t>(waiting_.size());
  s.num_running = static_cast<std::int32_t>(running_.size());
  kv_.count(s);
  s.num_loading = static_cast<std::int32_t>(disk_.loading().size());
  s.copy_batches_in_flight = copies_.size();
  loras_.count(s);
  for (const msg::request_id id : running_) {
    s.num_copying += seqs_.at(id)->state == seq_state::copying_in;
  }
  return s;
}

void scheduler_core::evict_all_cached() { kv_.evict_all(); }


}  // namespace courier::actors
