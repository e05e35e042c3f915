#pragma once
// The scheduler's policy, with no CAF messaging in it so it can be tested and timed directly:
// admission (validation, a request's choices all or none, fair order across requests by
// waiting_queue, prefix-cache lookup), each step's plan (every decode row, then prefill
// chunks under max_batched_tokens and max_num_seqs), block allocation with eviction and then
// preemption of the most recently started sequence, and the bookkeeping of results.
//
// Invariants (check_invariants): a sequence is in exactly one of disk_.loading(), waiting_ or
// running_; a running sequence's blocks cover its computed and in-flight tokens; block
// references match the pool's counts; at most one step is in flight, or two with `overlap`.
#include <caf/actor.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/block_usage.hpp"
#include "actors/scheduler/disk_reads.hpp"
#include "actors/scheduler/hybrid_snapshots.hpp"
#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/preempted_kv.hpp"
#include "actors/scheduler/prompt_admission.hpp"
#include "actors/scheduler/prompt_lookup.hpp"
#include "actors/scheduler/row_answers.hpp"
#include "actors/scheduler/scheduler_report.hpp"
#include "actors/scheduler/sequence.hpp"
#include "actors/scheduler/sequence_rows.hpp"
#include "actors/scheduler/step_flight.hpp"
#include "cache/shared_lookup_cache.hpp"
#include "actors/scheduler/lora_admission.hpp"
#include "actors/scheduler/waiting_queue.hpp"
#include "messages/step.hpp"
#include "messages/telemetry.hpp"

namespace courier::actors {

struct scheduler_options {
  std::int32_t max_num_seqs = 256;
  std::int32_t max_batched_tokens = 2048;
  bool prefix_caching = true;
  bool isolate_by_tenant = false;  // prefix cache namespaces include the tenant
  std::int64_t max_waiting = 1024;
  std::uint64_t seed = 0x636f7572696572ULL;  // for requests without a seed
  prompt_lookup_options lookup;
  // Plan step N + 1 while step N runs (two steps in flight), so the engine finds its next step
  // waiting instead of waiting for the scheduler. A decode row whose input token step N samples
  // "follows" it (the engine feeds that token, and counts it into a penalised sequence's
  // penalty list, on the device); rows with drafts, and sequences that step N ends by length,
  // wait for N's result.
  bool overlap = false;
  // Nanoseconds on a steady clock, for every time the scheduler reports (queue, TTFT, step
  // durations); null: the process's steady clock (telemetry::now_ns). Tests set their own.
  std::function<std::int64_t()> clock;
  // Hybrid models' snapshot cache (cache.* in the config): an intermediate snapshot every this
  // many prompt tokens (rounded down to whole blocks; 0: none); tail snapshots at decode-time
  // block boundaries (into free rows only); Marconi's weight of FLOPs saved per byte against
  // recency when a snapshot must go (0: LRU).
  std::int32_t ssm_checkpoint_tokens = 512;
  bool ssm_decode_snapshots = true;
  double ssm_eviction_alpha = 1.0;
  // A preempted sequence's KV (cache.preemption): kept in the engine's host tier when copying it
  // out and back is estimated cheaper than recomputing it (auto), whenever the tier has room
  // (swap), or never (recompute). A hybrid's recurrent state goes out and back with its blocks.
  using preemption_mode = actors::preemption_mode;  // (preempted_kv.hpp)
  preemption_mode preemption = preemption_mode::automatic;
  // The host tier's prefix cache takes a copy of each block the device's stores, on the copy
  // stream (kv_host_tier::write_through), instead of at its eviction
  // (cache.host_tier_write_through).
  bool host_write_through = true;
  // The KV disk tier behind the host tier (cache.disk_tier_*; num_slots 0: none): a request
  // whose prompt continues on disk past what the device and host hold waits, before it queues,
  // for those blocks to be read into host memory (take_disk_batch / on_disk_done).
  disk_tier_setup disk;
  std::int64_t disk_read_timeout_ms = 10000;
  std::shared_ptr<scheduler_observer> observer;  // null: nobody watches
  // The prefix cache's events (cache/cache_events.hpp: blocks stored, removed, all cleared),
  // handed over after each handler (flush_cache_events), the first batch an all-cleared (this
  // replica starts empty); null: none recorded (kv_events.endpoint unset).
  std::function<void(cache::cache_event_log)> cache_events;
};

// A token_event and where it goes.
struct outgoing_event {
  caf::actor to;
  msg::token_event event;
};

// A step the core planned: the plan, when its planning began and ended (the trace's clock, for
// the "plan" span) and its prefill tokens and decode rows.
struct planned_step {
  msg::step_plan plan;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int32_t prefill = 0;
  std::int32_t decode = 0;
};

// Everything the core leaves for its actor to send after a handler, in the order it is sent:
// the steps (one, or two with overlap; a step with a copy batch is followed by its copies_wait),
// the disk tier's batches, adapter changes for the engine (unloads, after the steps, none of
// which loads them again; host copies dropped or staged), the telemetry report, then the token
// events (a client that has its answer finds it counted in /metrics). The cache events went to
// their callback when these were taken.
struct scheduler_effects {
  std::vector<planned_step> steps;
  std::vector<msg::disk_batch> disk;
  std::vector<msg::lora_change> lora;
  std::optional<msg::telemetry_report> report;
  std::vector<outgoing_event> events;
};

class scheduler_core {
 public:
  scheduler_core(scheduler_options opts, const msg::engine_ready& ready);
  ~scheduler_core();

  // Validates and queues; a rejection is one final error event. A group of its own unless
  // s.group names one.
  void submit(msg::submit s, std::vector<outgoing_event>& out);
  // One request's choices, queued all together (one fairness group) or refused all together:
  // when a choice is invalid, or the waiting queue has no room for all of them, nothing is
  // queued and every choice gets a final error event. The answer says which.
  msg::submit_ack submit_batch(std::vector<msg::submit> choices, std::vector<outgoing_event>& out);
  // Ends the request now and frees its blocks: client_gone ends it as cancelled; stop_string
  // (admission matched a stop string) as a normal stop finish, its blocks inserted into the
  // prefix cache and its tokens stored for lookup, as at EOS. Unknown ids: nothing.
  void cancel(msg::request_id id, std::vector<outgoing_event>& out,
              msg::cancel_reason why = msg::cancel_reason::client_gone);
  // What a handler leaves to send (scheduler_effects), `events` (its token events) last: every
  // step there is room for, then what the pieces below have queued. The actor's one call after
  // each handler; the pieces stay public for drivers that step the core one piece at a time.
  scheduler_effects take_effects(std::vector<outgoing_event> events = {});
  // The next step, or nothing when idle or as many steps as allowed are in flight.
  std::optional<msg::step_plan> plan(std::vector<outgoing_event>& out);
  // The engine's answer to the oldest step in flight.
  void on_result(msg::step_result r, std::vector<outgoing_event>& out);
  // The disk tier's copies due (reads for waiting requests, writes of host tier blocks), for the
  // disk actor; nothing when none. Every batch must be answered with on_disk_done (a lost
  // answer: every op failed): its host blocks are held until then.
  std::optional<msg::disk_batch> take_disk_batch();
  void on_disk_done(const msg::disk_done& d);
  // Batch `id`'s reads have not answered in time (scheduler_options::disk_read_timeout_ms after
  // it was sent): requests waiting for them queue now, without what is still being read (a
  // slow or stuck disk delays no request longer). Nothing when the batch has answered.
  void on_disk_deadline(std::uint64_t id);
  // The engine's answer to copies_wait for a plan's copy_batch (every batch a plan carries must
  // be answered: its blocks are held until then). Its sequences get rows from the next plan
  // on; if it failed, they compute what the copies were to bring.
  void on_copies_done(const msg::copies_done& d);

  msg::scheduler_stats stats() const;
  // What happened since the previous call (counter increments, steps, ended requests) with the
  // gauges now; nothing when nothing changed.
  std::optional<msg::telemetry_report> take_report();
  void evict_all_cached();
  void check_invariants() const;

  // LoRA adapters at run time (scheduler_lora.cpp). begin_load: whether `name` may be loaded
  // now (the engine then reads it; load_done says how that went, making it usable); unload: new
  // requests for it are refused from now; take_unloaded: the unloaded adapters no sequence uses
  // any more, for the engine to forget (their slots hold nothing from now).
  msg::lora_ack begin_load(const std::string& name);
  void load_done(const std::string& name, bool ok, std::uint64_t fingerprint);
  msg::lora_ack unload(const std::string& name);
  std::vector<std::string> take_unloaded();
  // Hands the cache events recorded since the last call to options' cache_events (nothing when
  // there are none, or no one asked for them).
  void flush_cache_events();
  // The prefix cache's contents now, as events (an all-cleared, then every stored block).
  cache::cache_event_log cache_snapshot() const {
    cache::cache_event_log log;
    kv_.cache_snapshot(log);
    return log;
  }
  // Host copies (lora.max_cpu_loras): what the engine is to do since the last call (stage: read
  // an adapter's folder into host memory again, answered by lora_staged; evict: drop a copy),
  // in order, after the plans already taken.
  std::vector<msg::lora_change> take_lora_host_changes();
  // The engine answered a stage: ok, the adapter's waiting requests may be admitted; else they
  // fail with `error` (its folder could not be read again).
  void lora_staged(const std::string& name, bool ok, const std::string& error,
                   std::vector<outgoing_event>& out);
  // A sequence's block table as the scheduler holds it now (empty for an unknown id): what the
  // engine's copy must equal after the latest plan's row for it (tests check each plan).
  std::vector<std::int32_t> block_table(msg::request_id id) const;
  // The shared lookup cache (read-only, for tests and stats).
  const cache::shared_lookup_cache& lookup_cache() const { return lookup_.cache(); }

 private:
  std::int64_t now() const;
  sequence* find(msg::request_id id);
  std::string refusal(const msg::submit& s, msg::error_code& code) const;
  void reject(const msg::submit& s, msg::error_code code, const std::string& why,
              std::vector<outgoing_event>& out);
  void enqueue(msg::submit s);
  prefix_namespace namespace_of(const sequence& s) const;
  bool ensure_blocks(sequence& s, std::int32_t num_tokens);
  // check_invariants()'s parts (scheduler_invariants.cpp), each throwing std::logic_error.
  void check_queues() const;
  void check_slots() const;
  void check_host_blocks() const;
  void check_steps() const;
  bool can_follow(const sequence& s) const;
  // plan()'s pieces (scheduler_core.cpp): the plan being built, a row added to it, and its
  // phases in order: decode rows, prefill chunks, admissions, then the plan's copies and flight.
  struct step_builder {
    msg::step_plan p;
    std::vector<fed_row> fed;  // what each row feeds, for the flight
    std::int32_t budget = 0;      // tokens left in the step
    std::int32_t draft_rows = 0;  // drafts left (a recurrent model's draft state rows)
  };
  void add_row(step_builder& b, sequence& s, std::int32_t n, std::int32_t drafts,
               cache::proposal_source source, bool follows);
  void plan_decodes(step_builder& b);
  void plan_prefills(step_builder& b);
  void plan_admissions(step_builder& b);
  void start_running(sequence& s);
  msg::step_plan finish_plan(step_builder& b);
  sequence& victim_for(sequence& s, const std::vector<fed_row>* planned);
  void preempt(sequence& s);
  void finish(sequence& s, msg::finish_reason why, std::vector<msg::token_id> tokens,
              std::vector<msg::token_logprob> lp, std::vector<outgoing_event>& out);
  void fail(sequence& s, msg::error_code code, const std::string& message,
            std::vector<outgoing_event>& out);
  void remove(msg::request_id id);
  cache::lookup_scope scope_of(const sequence& s) const;
  std::int32_t draft_room(const sequence& s, std::int32_t budget, std::int32_t draft_rows) const;
  void note_step(const flight& f, const msg::step_result& r, std::int64_t now_ns);
  // on_result()'s pieces: the step's copies and loads settled, then each row answered.
  void settle_copies(const flight& done, bool ok);
  void row_answered(sequence& s, const fed_row& f, msg::row_result* row,
                    std::vector<outgoing_event>& out);
  // Hybrid prefix caching (hybrid_snapshots).
  bool snapshots_on() const { return snaps_.on(); }
  bool make_room(sequence& s, std::int32_t upto, const std::vector<fed_row>* planned);
  bool draining(const sequence& s) const {
    return std::find(draining_.begin(), draining_.end(), s.req.id) != draining_.end();
  }
  bool prefetch(sequence& s);  // disk reads the sequence waits for, started; false: none
  // The loading sequences disk_reads says may go, queued.
  void queue_loaded(const std::vector<disk_reads::ready>& ready);

  scheduler_options opts_;
  msg::engine_ready ready_;
  kv_manager kv_;
  cache::cache_event_log cache_events_;  // recorded since the last flush (with cache_events)
  // A hybrid's recurrent-state slots (ready_.state_slots); sequences hold them, so it is
  // declared before seqs_ and outlives them.
  state_pool states_;
  // LoRA adapters: names, fingerprints, the engine's slots (running sequences with an adapter
  // hold one: declared before seqs_ too) and host copies, admission while slots are short.
  lora_admission loras_;
  std::unordered_map<msg::request_id, std::unique_ptr<sequence>> seqs_;  // Owned.
  waiting_queue waiting_;  // preempted first, then round-robin across groups
  std::vector<msg::request_id> running_;  // prefilling or decoding, in admission order
  copy_batches copies_;  // copies back from the host tier in flight on the copy stream
  std::deque<flight> flights_;  // oldest first
  std::vector<msg::request_id> ended_;  // for the next plan's `ended`
  std::vector<msg::request_id> preempted_;  // for the next plan's `preempted`
  std::vector<msg::request_id> swapped_out_;  // whose swap-out copies the next plan carries
  // Victims chosen while a row of theirs was in flight (hybrids that swap): no row in this plan,
  // so that at the next they have nothing in flight and swap (make_room). Cleared at each plan.
  std::vector<msg::request_id> draining_;
  std::int64_t last_result_ns_ = 0;  // when the latest step result was handled
  std::uint64_t next_step_ = 1;
  std::uint64_t next_admit_ = 1;
  std::uint64_t seed_state_;
  msg::scheduler_stats stats_;
  hybrid_snapshots snaps_;  // a hybrid's prefix caching (counts into stats_)
  prompt_lookup lookup_;    // draft proposals, own history and per tenant scope (counts too)
  disk_reads disk_;  // sequences loading from disk (not in waiting_ nor running_), disk batches
  scheduler_report report_;  // for the telemetry actor: planning only tells it what happened
  prompt_admission admission_;  // a waiting sequence's first blocks (kv_, snaps_, copies_)
  preempted_kv preempted_kv_;   // where a preempted sequence's KV goes (kv_)
  row_answers answers_;  // what an answered row does to its sequence (kv_, snaps_, lookup_)
  double kv_usage();
  double kv_usage_ = 0;
  std::int64_t kv_usage_at_ns_ = 0;
  block_usage usage_;
};

}  // namespace courier::actors
