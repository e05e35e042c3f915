#include "actors/engine/engine_actor.hpp"

#include "actors/engine/lora_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "actors/engine/copy_batches.hpp"
#include "actors/engine/grammar_rows.hpp"
#include "actors/engine/lora_loader.hpp"
#include "actors/engine/sequence_table.hpp"
#include "actors/telemetry/trace.hpp"
#include "base/job_lane.hpp"

namespace courier::actors {

static_assert(msg::max_logit_bias == static_cast<std::size_t>(gpu::max_bias_tokens),
              "the scheduler admits as many logit_bias entries as the device reserves for");
static_assert(msg::max_end_tokens == static_cast<std::size_t>(gpu::max_end_tokens),
              "the scheduler admits the end tokens the sampler has room for");

namespace {

// A hybrid's state copies, for the model (run before the batch's rows, or alone).
std::vector<model::state_copy> state_copies_of(const msg::step_plan& plan) {
  std::vector<model::state_copy> out;
  out.reserve(plan.state_copies.size());
  for (const msg::state_copy& c : plan.state_copies) out.push_back({c.to_host, c.row, c.host_row});
  return out;
}

}  // namespace

namespace {

// A hybrid's Mamba-2 state: the row of the scheduler's state slot. A sequence's first row since
// its start starts fresh at position 0, resumes from a snapshot of the prefix before start_pos,
// or continues the state a copy put back.
void set_states(const msg::plan_row& r, const msg::sequence_start& st, bool first,
                model::forward_row& row) {
  if (st.state_slot < 0 ||
      (first && r.start_pos != 0 && st.state_restore < 0 && !st.state_copied)) {
    throw std::invalid_argument("step plan: sequence " + std::to_string(r.seq) +
                                " has no state slot, or its first row continues from position " +
                                std::to_string(r.start_pos) +
                                " without restoring a snapshot or its swapped state");
  }
  row.state_slot = st.state_slot;
  row.state_restore = first ? st.state_restore : -1;
  row.state_snapshot = r.state_snapshot;
}

// Prompt logprobs: scored on the device, [n, k] back.
void set_scores(const msg::plan_row& r, const sequence_record& seq, model::forward_row& row) {
  if (r.prompt_targets.empty()) return;
  row.logits = model::logits_mode::all;
  row.score_targets.reserve(r.prompt_targets.size());
  for (const msg::token_id t : r.prompt_targets) {
    row.score_targets.push_back(t == msg::no_token ? -1 : static_cast<std::int32_t>(t));
  }
  row.score_top_n = std::clamp(seq.sampling.prompt_logprobs, 0, gpu::max_logprobs);
}

// The penalty list: kept in its slot on the device (written there first when penalty_init,
// from fb's list); a penalised row without one is a broken plan.
void set_penalties(const msg::plan_row& r, const sequence_record& seq, const row_use& use,
                   model::forward_batch& fb, model::forward_row& row) {
  gpu::sampling_row& g = row.sampling;
  if (use.penalties >= 0) {
    row.penalty_slot = use.penalties;
    row.penalty_init = use.penalty_init;
  } else if (msg::penalised(seq.sampling)) {
    throw std::invalid_argument("step plan: sequence " + std::to_string(r.seq) +
                                " samples with penalties, and has no device slot to keep its "
                                "penalty list in");
  }
  if (!row.penalty_init) return;  // written to the slot's list before this step samples
  const std::vector<msg::penalty_entry>& list = seq.start.penalties;
  g.penalty_begin = static_cast<std::int32_t>(fb.penalty_tokens.size());
  g.penalty_count = static_cast<std::int32_t>(list.size());
  for (const msg::penalty_entry& p : list) {
    fb.penalty_tokens.push_back({p.token, p.output_count, p.in_prompt ? 1 : 0});
  }
}

// The logit bias. The scheduler admitted equal lengths; the model checks the count and the
// tokens. Kept in the sequence's slot on the device, it goes up once (bias_init).
void set_bias(const sequence_record& seq, const row_use& use, model::forward_batch& fb,
              model::forward_row& row) {
  const std::size_t num_bias = std::min(seq.bias_tokens.size(), seq.bias_values.size());
  gpu::sampling_row& g = row.sampling;
  g.bias_count = static_cast<std::int32_t>(num_bias);
  if (use.bias >= 0) {
    row.bias_slot = use.bias;
    row.bias_init = use.bias_init;
  }
  if (num_bias == 0 || (row.bias_slot >= 0 && !row.bias_init)) return;
  g.bias_begin = static_cast<std::int32_t>(fb.bias_tokens.size());
  for (std::size_t j = 0; j < num_bias; ++j) {
    fb.bias_tokens.push_back({seq.bias_tokens[j], seq.bias_values[j]});
  }
}

// min_tokens: a row that samples below it bans the end tokens (each position by its own draw).
void set_end_ban(const msg::plan_row& r, const msg::sampling_params& s, model::forward_batch& fb,
                 gpu::sampling_row& g) {
  if (s.end_tokens.empty() || r.draw_index >= static_cast<std::uint64_t>(s.min_tokens)) return;
  g.end_until = static_cast<std::uint64_t>(s.min_tokens);
  g.end_begin = static_cast<std::int32_t>(fb.end_tokens.size());
  g.end_count = static_cast<std::int32_t>(s.end_tokens.size());
  fb.end_tokens.insert(fb.end_tokens.end(), s.end_tokens.begin(), s.end_tokens.end());
}

void set_sampling(const msg::plan_row& r, const sequence_record& seq, const row_use& use,
                  model::forward_batch& fb, model::forward_row& row) {
  const msg::sampling_params& s = seq.sampling;
  gpu::sampling_row& g = row.sampling;
  g.temperature = s.temperature;
  g.top_k = s.top_k;
  g.top_p = s.top_p;
  g.min_p = s.min_p;
  g.repetition_penalty = s.repetition_penalty;
  g.presence_penalty = s.presence_penalty;
  g.frequency_penalty = s.frequency_penalty;
  g.seed = s.seed;
  g.draw_index = r.draw_index;
  g.num_logprobs = s.logprobs > 0 ? s.logprobs : 0;
  set_penalties(r, seq, use, fb, row);
  set_bias(seq, use, fb, row);
  set_end_ban(r, s, fb, g);
}

}  // namespace

model::forward_batch to_forward_batch(const msg::step_plan& plan, const sequence_table& seqs,
                                      const std::vector<row_use>& uses, bool state_slots) {
  model::forward_batch fb;
  fb.rows.reserve(plan.rows.size());
  fb.state_copies = state_copies_of(plan);
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const msg::plan_row& r = plan.rows[i];
    const row_use& use = uses.at(i);
    if (!use.runs) continue;
    const sequence_record* seq = seqs.find(r.seq);
    if (!seq || !seq->started) {
      throw std::invalid_argument("step plan: no start for sequence " + std::to_string(r.seq));
    }
    model::forward_row row;
    row.token_slot = use.read;
    row.next_slot = use.write;
    row.table_slot = use.table;
    row.table_keep = use.table_keep;
    row.tokens = r.tokens;
    row.start_pos = r.start_pos;
    row.lora_slot = seq->start.lora_slot;
    if (state_slots) set_states(r, seq->start, use.first, row);
    row.table_ref = &seq->table;  // borrowed: the forward batch is launched while `seqs` holds it
    row.logits = r.sample ? model::logits_mode::last : model::logits_mode::none;
    set_scores(r, *seq, row);
    row.sample = r.sample;
    row.return_hidden = r.sample && seq->sampling.embed;
    row.num_sample = r.sample ? 1 + r.num_drafts : 1;
    if (r.sample) set_sampling(r, *seq, use, fb, row);
    fb.rows.push_back(std::move(row));
  }
  return fb;
}

msg::step_result to_step_result(const msg::step_plan& plan, const std::vector<row_use>& uses,
                                model::forward_output&& out) {
  msg::step_result res;
  res.step = plan.step;
  res.rows.resize(plan.rows.size());
  std::size_t k = 0;  // the row's in `out`
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::row_result& rr = res.rows[i];
    rr.seq = plan.rows[i].seq;
    if (!uses.at(i).runs) {
      rr.error = msg::error_code::engine_failure;
      rr.message =
          "the step this row follows failed or did not sample its sequence, or the sequence "
          "holds no device slot";
      continue;
    }
    model::row_output& o = out.rows.at(k++);
    for (gpu::sample_result& s : o.scores) {  // one per prompt target, in order
      rr.prompt_logprobs.push_back(
          {s.token, s.logprob, std::move(s.top_ids), std::move(s.top_logprobs)});
    }
    rr.embedding = std::move(o.hidden);
    const msg::plan_row& row = plan.rows[i];
    if (!row.sample) continue;
    // Verification: position j's sample is the token a one-at-a-time decode would draw there;
    // draft j + 1 stands while it equals that sample. So the output is exactly that decode's,
    // and for sampling this is rejection sampling against a one-hot draft (accepted with
    // probability p(draft), else a draw from p without it): the distribution is unchanged.
    const std::size_t first_draft = row.tokens.size() - static_cast<std::size_t>(row.num_drafts);
    for (std::size_t j = 0; j < o.samples.size(); ++j) {
      gpu::sample_result& s = o.samples[j];
      rr.tokens.push_back(s.token);
      if (uses[i].logprobs) {
        rr.logprobs.push_back(
            {s.token, s.logprob, std::move(s.top_ids), std::move(s.top_logprobs)});
      }
      const std::size_t next = first_draft + j;  // the draft this sample checks
      if (next >= row.tokens.size() || row.tokens[next] != s.token) break;
    }
  }
  return res;
}

namespace {

// A plan the engine has launched (or failed to) and not yet answered.
struct launched_step {
  msg::step_plan plan;
  std::vector<row_use> uses;  // how each of its rows runs
  std::optional<model::launched_forward> forward;  // empty: nothing launched
  std::optional<msg::step_result> failed;          // the launch failed
  caf::typed_response_promise<msg::step_result> promise;
  std::chrono::steady_clock::time_point start;
  bool watched = false;  // the completion waiter watches it
  // The step's "step_plan" span (traced: tracing was on at its launch): from its launch to
  // when it is seen done, recorded on the device's lane when it is answered.
  telemetry::span trace;
  bool traced = false;
};

// An adapter being read for a msg::lora_change: who waits for it, and its folder.
struct lora_job {
  caf::typed_response_promise<msg::lora_ack> promise;
  std::string dir;
  bool stage = false;  // a registered adapter read again (lora_change::stage)
};

// The engine's state. Destroyed in reverse: the waiter joins before the steps it may hold go,
// and they before the resources.
struct engine_state {
  std::shared_ptr<engine_resources> res;
  // The model to step: one, or every tensor-parallel rank at once (made with res's).
  std::optional<model::model_group> model;
  sequence_table seqs{0};  // each running sequence's record, kept across steps
  grammar_rows grammars;
  std::deque<launched_step> steps;  // launched, in plan order
  std::chrono::steady_clock::time_point last_answer;  // of the step answered last
  // The trace's lane for the device's steps (step_plan spans), and where its last one ended.
  std::uint32_t device_track = telemetry::new_track();
  std::int64_t last_traced_end_ns = 0;
  // Blocks on the device for the steps launched (one job per step watched), off this thread.
  base::job_lane waiter{"courier-steps", 1};
  std::optional<copy_batches> copies;  // made with the actor's address
  // Adapters being read (msg::lora_change), and the requests waiting for them.
  std::map<std::uint64_t, lora_job> lora_waiting;
  std::optional<lora_loader> loras;  // its reads are never waited for (lora_loader.hpp)
};

msg::step_result failure(std::uint64_t step, const std::exception& e) {
  msg::step_result r;
  r.step = step;
  r.error = msg::error_code::engine_failure;
  r.message = e.what();
  return r;
}

void answer_launched(engine_state& st, const caf::weak_actor_ptr* self);

// The step's "step_plan" span on the device's lane, when tracing is on (`span`: the host's).
void start_trace(launched_step& ls, const msg::step_plan& plan, telemetry::scoped_span& span) {
  if (!span.active()) return;
  ls.traced = true;
  telemetry::span& t = ls.trace;
  t.actor = "engine";
  t.message = "step_plan";
  t.step = plan.step;
  t.start_ns = telemetry::now_ns();
  t.rows = static_cast<std::int32_t>(plan.rows.size());
  for (const msg::plan_row& row : plan.rows) {
    if (row.decode) {
      ++t.decode;
    } else {
      t.prefill += static_cast<std::int32_t>(row.tokens.size());
    }
  }
  span->rows = t.rows;
  span->decode = t.decode;
  span->prefill = t.prefill;
}

// The per-sequence records the plan changes (sequence_table::apply: before anything can fail,
// so they stay what the scheduler thinks they are whatever the step does), and how each row
// runs. Returns the protocol error of a malformed plan.
std::optional<msg::step_result> apply_plan(engine_state& st, const msg::step_plan& plan,
                                           launched_step& ls) {
  std::optional<std::string> error = st.seqs.apply(plan);
  ls.uses = st.seqs.resolve(plan);
  if (!error) return std::nullopt;
  return failure(plan.step, std::invalid_argument(*error));
}

// Adapters into their slots first, in stream order after the steps before (which may still run
// with what the slots held); swaps and spills, in stream order before the rows
// (msg::step_plan::block_copies); then the copies back from the host tier, on the copy stream
// beside the rows.
void launch_copies(engine_state& st, const msg::step_plan& plan) {
  for (const msg::lora_load& l : plan.lora_loads) {
    const auto it = st.res->adapters.find(l.adapter);
    if (it == st.res->adapters.end()) {
      throw std::invalid_argument("step plan: no host copy of the LoRA adapter '" + l.adapter +
                                  "'");
    }
    st.model->load_lora(l.slot, *it->second);
  }
  if (!plan.block_copies.empty()) {
    std::vector<model::model_group::block_copy> copies;
    for (const msg::block_copy& c : plan.block_copies) {
      copies.push_back({c.block, c.host_block, c.to_host});
    }
    st.model->copy_blocks(copies);
  }
  st.copies->launch(plan, [&](const std::vector<model::kv_cache::host_copy>& copies) {
    return st.model->copy_blocks_async(copies);
  });
}

// The forward pass of the rows that run (or, with none, a hybrid's state copies, which a batch
// with rows runs first).
void launch_rows(engine_state& st, const msg::step_plan& plan, launched_step& ls) {
  model::forward_batch fb =
      to_forward_batch(plan, st.seqs, ls.uses, st.res->model->config().hybrid());
  if (fb.rows.empty()) {  // no row, or none that runs
    st.model->copy_states(fb.state_copies);
    return;
  }
  model::mask_filler fill;
  if (grammar_rows::constrained(plan, ls.uses, st.seqs)) {
    // The masks need the tokens of every step before this one: they are answered (waited for)
    // once this step's forward pass is enqueued, then the masks are computed while it runs.
    const std::int64_t vocab = st.res->model->config().vocab_size;
    grammar_rows::place(plan, ls.uses, st.seqs, fb, vocab);
    fill = [&st, &plan, &ls, vocab](std::vector<std::uint32_t>& words) {
      answer_launched(st, nullptr);
      telemetry::scoped_span masks("engine", "grammar_masks", 0, plan.step);
      st.grammars.fill(plan, ls.uses, st.seqs, words, vocab);
    };
  }
  ls.forward = st.model->launch(fb, fill);
  st.seqs.launched(plan, ls.uses);
}

void launch(engine_state& st, msg::step_plan& plan,
            caf::typed_response_promise<msg::step_result> promise) {
  launched_step ls;
  ls.start = std::chrono::steady_clock::now();
  ls.promise = std::move(promise);
  telemetry::scoped_span span("engine", "step_launch", 0, plan.step);  // the host's part
  start_trace(ls, plan, span);
  if (std::optional<msg::step_result> protocol_error = apply_plan(st, plan, ls)) {
    ls.failed = std::move(protocol_error);
  } else if (!plan.rows.empty() || !plan.block_copies.empty() || !plan.async_copies.empty() ||
             !plan.lora_loads.empty() || !plan.state_copies.empty()) {
    try {
      telemetry::scoped_span forward("engine", "forward", 0, plan.step);
      launch_copies(st, plan);
      launch_rows(st, plan, ls);
    } catch (const std::exception& e) {
      // The step fails; the engine, its memory and the other requests carry on.
      ls.failed = failure(plan.step, e);
    }
  }
  if (plan.copy_batch != 0 && !st.copies->known(plan.copy_batch)) {
    st.copies->fail(plan.copy_batch, "step " + std::to_string(plan.step) +
                                         " failed before its copies were launched");
  }
  ls.plan = std::move(plan);
  st.steps.push_back(std::move(ls));
}

// Answers the launched steps the device has finished, in plan order; has the waiter watch the
// first one still running (pipeline: `self` given), or waits for it (no pipeline, or no `self`:
// every launched step is answered).
void answer_launched(engine_state& st, const caf::weak_actor_ptr* self) {
  while (!st.steps.empty()) {
    launched_step& ls = st.steps.front();
    if (ls.forward && !ls.forward->ready()) {
      if (st.res->pipeline && self) {
        if (!ls.watched) {
          ls.watched = true;
          st.waiter.post([samples = ls.forward->samples(), self = *self] {
            samples->wait();
            if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(self)) {
              caf::anon_send(caf::actor_cast<engine_impl>(strong), msg::step_done_atom_v);
            }
          });
        }
        return;
      }
      ls.forward->wait();
    }
    msg::step_result r;
    if (ls.failed) {
      r = std::move(*ls.failed);
    } else {
      try {
        model::forward_output out;
        if (ls.forward) out = ls.forward->finish();
        r = to_step_result(ls.plan, ls.uses, std::move(out));
        grammar_rows::apply(ls.plan, st.seqs, r);
      } catch (const std::exception& e) {
        r = failure(ls.plan.step, e);
      }
    }
    // A step launched behind another runs once that one is done: its time starts then.
    const auto now = std::chrono::steady_clock::now();
    r.forward_ms =
        std::chrono::duration<double, std::milli>(now - std::max(ls.start, st.last_answer)).count();
    st.last_answer = now;
    if (ls.traced) {  // the same interval on the device's lane, where the steps never overlap
      const std::int64_t end = telemetry::now_ns();
      ls.trace.start_ns = std::max(ls.trace.start_ns, st.last_traced_end_ns);
      ls.trace.duration_ns = end - ls.trace.start_ns;
      st.last_traced_end_ns = end;
      telemetry::record_on(ls.trace, st.device_track);
    }
    ls.promise.deliver(std::move(r));
    st.steps.pop_front();
  }
}

// What the scheduler and admission are told of the engine (msg::ready_atom).
msg::engine_ready ready_report(const engine_resources& res) {
  msg::engine_ready r;
  const model::model_config& c = res.model->config();
  r.num_kv_blocks = res.cache->num_blocks();
  r.block_size = res.cache->block_size();
  r.vocab_size = c.vocab_size;
  r.hidden_size = c.hidden_size;
  r.max_model_len = res.max_model_len;
  r.eos_token_ids = c.eos_token_ids;
  r.model_name = res.model_name;
  r.weights_fingerprint = res.weights_fingerprint;
  r.tokenizer_fingerprint = res.tokenizer_fingerprint;
  r.device_name = res.dev->name();
  if (res.peers) {
    r.device_name += " x" + std::to_string(res.peers->size() + 1) + " (tensor parallel)";
  }
  // The KV and compute figures below are one rank's: each rank holds and computes its
  // share of every block and step at once.
  const model::model_config& shard = res.model->shard_config();
  r.recurrent = c.hybrid();
  const gpu::dtype t = res.dev->compute_dtype();
  r.host_kv_blocks = res.cache->host_blocks();
  r.kv_block_bytes = static_cast<double>(model::kv_cache::block_bytes(shard, r.block_size, t));
  r.linear_flops_per_token = 2.0 * static_cast<double>(res.model->weight_bytes()) /
                             static_cast<double>(gpu::dtype_size(t));
  r.device_flops = res.dev->compute_flops();
  r.host_bytes_per_s = res.dev->host_bytes_per_s();
  // QK^T and PV: 2 x 2 x heads x head_dim per (query, key) pair per attention layer.
  r.attention_flops_per_pair = 4.0 * shard.num_heads * shard.head_dim * shard.kv_layers();
  if (c.hybrid()) {
    r.state_slots = res.state_slots;
    r.snapshot_slots = res.model->state_slots() - res.state_slots;
    r.draft_state_rows = res.model->draft_state_rows();
    r.snapshot_bytes = static_cast<double>(res.model->state_bytes_per_slot());
    r.kv_bytes_per_token = static_cast<double>(model::kv_cache::block_bytes(c, r.block_size, t)) /
                           static_cast<double>(r.block_size);
    r.host_snapshot_slots = res.model->host_state_rows();
  }
  r.lora_slots = res.model->lora_slots();
  for (const auto& [name, a] : res.adapter_dirs) {
    r.lora_adapters.push_back(name);
    r.lora_adapter_fingerprints.push_back(a.fingerprint);
  }
  r.lora_host_capacity = res.lora_host_capacity;
  for (const auto& [name, adapter] : res.adapters) r.lora_host_adapters.push_back(name);
  return r;
}

// msg::lora_change: an adapter dropped at once, or read on the loader's thread and answered
// when it is parsed (lora_parsed) or times out.
caf::result<msg::lora_ack> change_lora(engine_impl::pointer self, engine_state* st,
                                       msg::lora_change& c) {
  engine_resources& res = *st->res;
  switch (c.op) {
    case msg::lora_change::unload:  // asked once no plan will load it again
      res.adapters.erase(c.name);
      res.adapter_dirs.erase(c.name);
      return msg::lora_ack{true, 200, ""};
    case msg::lora_change::evict:  // after every plan that loads it
      res.adapters.erase(c.name);
      return msg::lora_ack{true, 200, ""};
    case msg::lora_change::stage: {
      const auto dir = res.adapter_dirs.find(c.name);
      if (dir == res.adapter_dirs.end()) {
        return msg::lora_ack{false, 404, "no LoRA adapter '" + c.name + "'"};
      }
      c.path = dir->second.dir;
      break;
    }
    case msg::lora_change::load:
      if (res.model->lora_slots() == 0) {
        return msg::lora_ack{false, 400, "the engine has no LoRA slots"};
      }
      break;
    default:
      return msg::lora_ack{false, 400, "unknown LoRA change"};
  }
  auto promise = self->make_response_promise<msg::lora_ack>();
  const std::uint64_t id =
      st->loras->start(c.name, c.path, res.model->config(), res.lora_max_rank, res.read_adapter);
  self->delayed_send(self, std::chrono::seconds(res.lora_load_timeout_s), msg::lora_timeout_atom_v,
                     id);
  st->lora_waiting.emplace(id,
                           lora_job{promise, std::move(c.path), c.op == msg::lora_change::stage});
  return promise;
}

// An adapter read for msg::lora_change: kept (and its folder registered) and the request
// answered; a staged one only if its files are those loaded before.
void adapter_parsed(engine_state* st, std::uint64_t id) {
  std::optional<lora_loader::result> r = st->loras->take(id);
  auto it = st->lora_waiting.find(id);
  if (!r || it == st->lora_waiting.end()) return;
  lora_job job = std::move(it->second);
  st->lora_waiting.erase(it);
  if (!r->adapter) {
    job.promise.deliver(msg::lora_ack{false, 400, r->error});
    return;
  }
  auto& registered = st->res->adapter_dirs;
  const std::uint64_t fingerprint = r->adapter->fingerprint;
  if (job.stage) {
    const auto it = registered.find(r->name);
    if (it == registered.end()) {  // unloaded meanwhile
      job.promise.deliver(msg::lora_ack{false, 404, "no LoRA adapter '" + r->name + "'"});
      return;
    }
    if (it->second.fingerprint != fingerprint) {  // its cached KV is another adapter's
      job.promise.deliver(msg::lora_ack{
          false, 409,
          "the files of LoRA adapter '" + r->name + "' in " + job.dir +
              " changed since it was loaded; unload it and load it again"});
      return;
    }
  }
  st->res->adapters[r->name] = std::move(r->adapter);
  registered[r->name] = {std::move(job.dir), fingerprint};
  job.promise.deliver(msg::lora_ack{true, 200, "", fingerprint});
}

using self_ptr = engine_impl::stateful_pointer<engine_state>;

// The actor: its state (engine_state) lives in the actor and goes when it quits; the handlers
// and the threads' callbacks reach it only on the actor's thread.
engine_impl::behavior_type engine_fn(self_ptr self, std::shared_ptr<engine_resources> res) {
  engine_state* st = &self->state;
  st->res = res;
  st->model.emplace(*res->model, *res->cache, res->peers.get());
  res->dev->bind_thread();  // this detached actor's thread drives rank 0's device
  st->seqs = sequence_table(res->model->token_slots());
  const auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  st->copies.emplace([weak](std::uint64_t batch) {
    if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak)) {
      caf::anon_send(caf::actor_cast<engine_impl>(strong), msg::copies_done_atom_v, batch);
    }
  });
  st->loras.emplace([weak](std::uint64_t id) {
    if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak)) {
      caf::anon_send(caf::actor_cast<engine_impl>(strong), msg::lora_parsed_atom_v, id);
    }
  });
  return {
      [res](msg::ready_atom) { return ready_report(*res); },
      [self, st, weak](msg::step_plan& plan) -> caf::result<msg::step_result> {
        auto promise = self->make_response_promise<msg::step_result>();
        launch(*st, plan, promise);
        answer_launched(*st, &weak);
        return promise;
      },
      [st, weak](msg::step_done_atom) { answer_launched(*st, &weak); },
      [self, st](msg::copies_wait w) -> caf::result<msg::copies_done> {
        auto promise = self->make_response_promise<msg::copies_done>();
        st->copies->wait(w.batch, promise);
        return promise;
      },
      [st](msg::copies_done_atom, std::uint64_t batch) { st->copies->on_done(batch); },
      [self, st](msg::lora_change& c) -> caf::result<msg::lora_ack> {
        return change_lora(self, st, c);
      },
      [st](msg::lora_timeout_atom, std::uint64_t id) {
        auto it = st->lora_waiting.find(id);
        if (it == st->lora_waiting.end()) return;  // answered already
        it->second.promise.deliver(msg::lora_ack{
            false, 504,
            fmt::format("reading the LoRA adapter folder {} did not finish within "
                        "lora.load_timeout_s ({} s)",
                        it->second.dir, st->res->lora_load_timeout_s)});
        st->lora_waiting.erase(it);  // its result, if it ever comes, is dropped
      },
      [st](msg::lora_parsed_atom, std::uint64_t id) { adapter_parsed(st, id); },
  };
}

}  // namespace

engine_impl spawn_engine(caf::actor_system& sys, std::shared_ptr<engine_resources> res) {
  return sys.spawn<caf::detached>(engine_fn, std::move(res));
}

}  // namespace courier::actors
