// The scheduler's own cost per step, engine excluded: 256 running sequences with 2k-token
// contexts decoding, planned and booked by scheduler_core directly (BM_plan_and_book_step); the
// same at contexts of 1k, 8k and 32k tokens with the bytes of each step message as CAF
// serializes it, without and with penalties (BM_plan_at_context: both should not grow with the
// context); and
// the same through the actors with an engine that answers at once (BM_actor_round_trip_step);
// and how long a busy engine waits for the scheduler between steps, with and without planning
// ahead, and with an engine that pipelines steps as engine_fn does (BM_engine_idle_between_steps).
#include <benchmark/benchmark.h>
#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <thread>

#include "base/job_lane.hpp"
#include "actors/engine/engine_actor.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/telemetry/telemetry_actor.hpp"

using namespace courier;

namespace {

constexpr int num_seqs = 256;
constexpr int context = 2048;

msg::engine_ready ready() {
  msg::engine_ready r;
  r.block_size = 16;
  r.num_kv_blocks = num_seqs * (context / 16 + 80);
  r.vocab_size = 32000;
  r.max_model_len = context + 1200;
  return r;
}

actors::scheduler_options options() {
  actors::scheduler_options o;
  o.max_num_seqs = num_seqs;
  o.max_batched_tokens = 65536;
  return o;
}

msg::step_result answer(const msg::step_plan& p) {
  msg::step_result r;
  r.step = p.step;
  r.rows.resize(p.rows.size());
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    r.rows[i].seq = p.rows[i].seq;
    // A token that no earlier text predicts, so prompt lookup searches and finds nothing (its
    // worst case: the full search every step, no backoff).
    const auto pos = static_cast<std::uint64_t>(p.rows[i].start_pos) + p.rows[i].tokens.size();
    if (p.rows[i].sample) {
      r.rows[i].tokens.push_back(
          static_cast<msg::token_id>(31000 + (pos * 7 + p.rows[i].seq) % 1000));
    }
  }
  return r;
}

msg::submit request(msg::request_id id) {
  msg::submit s;
  s.id = id;
  s.prompt.resize(context);
  for (int i = 0; i < context; ++i)
    s.prompt[i] = static_cast<msg::token_id>((id * 131 + i) % 31000);
  s.max_tokens = 1100;
  s.ignore_eos = true;
  return s;
}

// Steps until a step is num_seqs decode rows and nothing else (every prompt prefilled). Returns
// the penalty entries the plans carried (each penalised sequence's list, sent once).
std::size_t run_until_all_decode(actors::scheduler_core& core) {
  std::vector<actors::outgoing_event> out;
  std::size_t entries = 0;
  for (;;) {
    auto p = core.plan(out);
    for (const msg::sequence_start& st : p->starts) entries += st.penalties.size();
    const bool all_decode =
        p->rows.size() == static_cast<std::size_t>(num_seqs) &&
        std::all_of(p->rows.begin(), p->rows.end(), [](const msg::plan_row& r) { return r.decode; });
    core.on_result(answer(*p), out);
    out.clear();
    if (all_decode) return entries;
  }
}

// Argument 1: prompt lookup on (own history searched for every row, every step).
void BM_plan_and_book_step(benchmark::State& state) {
  auto o = options();
  o.lookup.enabled = state.range(0) == 1;
  actors::scheduler_core core(o, ready());
  std::vector<actors::outgoing_event> out;
  for (int i = 1; i <= num_seqs; ++i) core.submit(request(i), out);
  // Prefill everything, so every following step is 256 decode rows.
  run_until_all_decode(core);
  for (auto _ : state) {
    auto p = core.plan(out);
    state.PauseTiming();
    msg::step_result r = answer(*p);
    state.ResumeTiming();
    core.on_result(std::move(r), out);
    out.clear();
    benchmark::DoNotOptimize(p);
  }
  state.counters["rows"] = num_seqs;
}
BENCHMARK(BM_plan_and_book_step)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->Iterations(1000);

// Arguments: the context of every sequence, in tokens; whether every request has a frequency
// penalty. 256 rows decode each step; reported per step: the time to plan and book it, and the
// bytes of its step_plan as CAF serializes it (what crosses from the scheduler to the engine).
// With penalties, resend_bytes is what the rows' penalty lists weigh (9 bytes an entry), which
// every step carried before the lists were kept on the device; now only a sequence's first
// sampling row carries its list.
void BM_plan_at_context(benchmark::State& state) {
  const auto ctx = static_cast<int>(state.range(0));
  const bool penalised = state.range(1) == 1;
  auto o = options();
  msg::engine_ready r = ready();
  r.num_kv_blocks = num_seqs * (ctx / 16 + 80);
  r.max_model_len = ctx + 1200;
  actors::scheduler_core core(o, r);
  std::vector<actors::outgoing_event> out;
  for (int i = 1; i <= num_seqs; ++i) {
    msg::submit s = request(i);
    s.prompt.resize(static_cast<std::size_t>(ctx));
    for (int j = 0; j < ctx; ++j) s.prompt[j] = static_cast<msg::token_id>((i * 131 + j) % 31000);
    if (penalised) s.sampling.frequency_penalty = 0.5f;
    core.submit(std::move(s), out);
  }
  const std::size_t entries = run_until_all_decode(core);
  double bytes = 0, max_bytes = 0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    auto p = core.plan(out);
    state.PauseTiming();
    std::vector<char> buf;
    caf::binary_serializer sink{nullptr, buf};
    if (auto err = sink(*p)) state.SkipWithError("cannot serialize the step plan");
    bytes += static_cast<double>(buf.size());
    max_bytes = std::max(max_bytes, static_cast<double>(buf.size()));
    ++steps;
    msg::step_result res = answer(*p);
    state.ResumeTiming();
    core.on_result(std::move(res), out);
    out.clear();
  }
  state.counters["rows"] = num_seqs;
  state.counters["context"] = ctx;
  state.counters["plan_bytes"] = steps ? bytes / static_cast<double>(steps) : 0;
  state.counters["max_plan_bytes"] = max_bytes;
  state.counters["resend_bytes"] = static_cast<double>(entries) * 9;
}
BENCHMARK(BM_plan_at_context)
    ->Args({1024, 0})
    ->Args({8192, 0})
    ->Args({32768, 0})
    ->Args({1024, 1})
    ->Args({8192, 1})
    ->Args({32768, 1})
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(1000);

actors::engine_actor::behavior_type instant_engine(actors::engine_actor::pointer) {
  return {
      [](msg::ready_atom) { return ready(); },
      [](msg::copies_wait w) {  // no host tier here: never asked
        return msg::copies_done{w.batch, false, "no copy stream"};
      },
      [](msg::lora_change&) { return msg::lora_ack{false, 400, "no LoRA here"}; },
      [](msg::step_plan& p) { return answer(p); },
  };
}

msg::scheduler_stats stats_of(caf::scoped_actor& self, const actors::scheduler_actor& sched) {
  msg::scheduler_stats s;
  self->request(sched, caf::infinite, msg::stats_atom_v)
      .receive([&](msg::scheduler_stats& x) { s = x; }, [](caf::error&) {});
  return s;
}

// Submits num_seqs requests of max_tokens tokens (ids from base_id + 1) whose events go to
// `sink`, then asks for the stats every `poll` until none runs or waits; returns those stats.
msg::scheduler_stats run_requests(caf::scoped_actor& self, const actors::scheduler_actor& sched,
                                  const caf::actor& sink, msg::request_id base_id,
                                  std::int32_t max_tokens, std::chrono::milliseconds poll) {
  for (int i = 1; i <= num_seqs; ++i) {
    auto s = request(base_id + static_cast<msg::request_id>(i));
    s.max_tokens = max_tokens;
    s.reply_to = sink;
    self->send(sched, std::move(s));
  }
  msg::scheduler_stats st;
  do {
    if (poll.count() > 0) std::this_thread::sleep_for(poll);
    st = stats_of(self, sched);
  } while (st.num_running + st.num_waiting > 0);
  return st;
}

// The whole loop through CAF: the scheduler sends each plan to an engine actor that answers at
// once, and emits one token_event per row to a sink actor. Reported per step. Argument: 0 no
// telemetry, 1 metrics reports to a telemetry actor, 2 metrics and the actor trace (to /tmp).
void BM_actor_round_trip_step(benchmark::State& state) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  {
    auto engine = sys.spawn(instant_engine);
    actors::telemetry_actor tel;
    if (state.range(0) >= 1) {
      actors::telemetry_options o;
      o.model_name = "bench";
      if (state.range(0) == 2) {
        o.trace =
            std::make_shared<telemetry::trace_writer>("/tmp/scheduler_bench.trace", 1.0, "bench");
      }
      tel = sys.spawn(actors::telemetry_fn, std::move(o));
    }
    auto sched = actors::spawn_scheduler(sys, engine, options(), ready(), tel);
    caf::scoped_actor self{sys};
    auto sink = sys.spawn(
        [](caf::event_based_actor*) -> caf::behavior { return {[](msg::token_event&) {}}; });
    for (auto _ : state) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::uint64_t before = stats_of(self, sched).num_steps;
      const msg::scheduler_stats s =
          run_requests(self, sched, sink, static_cast<msg::request_id>(state.iterations()) * 1000,
                       200, std::chrono::milliseconds(0));
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      state.counters["steps"] = static_cast<double>(s.num_steps - before);
      state.counters["us_per_step"] = us / static_cast<double>(s.num_steps - before);
    }
    caf::anon_send_exit(sched, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    if (tel) caf::anon_send_exit(tel, caf::exit_reason::user_shutdown);
  }
}
BENCHMARK(BM_actor_round_trip_step)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

// What the GPU sees: a step takes a fixed forward time (as a GPU step would), and the GPU sits
// idle between finishing one step and starting the next while it waits for the host. Argument:
// 0 scheduler.overlap off, 1 overlap on, each with a detached engine that is busy for the step
// (the engine waits for every step, engine.pipeline off); 2 overlap on with an engine that
// pipelines as engine_fn does (engine.pipeline on): it launches each plan onto an emulated GPU
// (a thread that runs queued steps one after another) at once, and answers a step, in order,
// when the GPU thread tells it the step has finished.
struct engine_clock {
  std::atomic<std::int64_t> idle_ns{0};
  std::atomic<std::int64_t> steps{0};
  std::atomic<std::int64_t> decode_idle_ns{0};  // before steps of decode rows only
  std::atomic<std::int64_t> decode_steps{0};
  std::int64_t last_end_ns = 0;  // the thread running the steps only
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool decode_only(const msg::step_plan& p) {
  return std::all_of(p.rows.begin(), p.rows.end(),
                     [](const msg::plan_row& r) { return r.decode; });
}

// One step on the GPU: counts the idle time since the step before ended, then is busy for
// forward_ns (doing `work` meanwhile).
template <class Work>
void run_step(engine_clock& clock, bool decode, std::int64_t forward_ns, Work&& work) {
  const std::int64_t start = now_ns();
  if (clock.last_end_ns > 0) {
    clock.idle_ns += start - clock.last_end_ns;
    if (decode) {
      clock.decode_idle_ns += start - clock.last_end_ns;
      ++clock.decode_steps;
    }
  }
  work();
  while (now_ns() - start < forward_ns) {
  }
  clock.last_end_ns = now_ns();
  ++clock.steps;
}

actors::engine_actor::behavior_type busy_engine(actors::engine_actor::pointer,
                                                std::shared_ptr<engine_clock> clock,
                                                std::int64_t forward_ns) {
  return {
      [](msg::ready_atom) { return ready(); },
      [](msg::copies_wait w) {  // no host tier here: never asked
        return msg::copies_done{w.batch, false, "no copy stream"};
      },
      [](msg::lora_change&) { return msg::lora_ack{false, 400, "no LoRA here"}; },
      [clock, forward_ns](msg::step_plan& p) {
        msg::step_result r;
        run_step(*clock, decode_only(p), forward_ns, [&] { r = answer(p); });
        return r;
      },
  };
}

// The pipelined engine: each plan is answered at launch time (answer(p)) and queued on an
// emulated GPU, a one-thread job lane whose jobs run one after another, each a step of
// forward_ns that then tells the engine (step_done_atom, as the completion waiter does for
// engine_fn); the engine delivers the answers in order.
actors::engine_impl::behavior_type pipelined_engine(actors::engine_impl::pointer self,
                                                     std::shared_ptr<engine_clock> clock,
                                                     std::int64_t forward_ns) {
  struct state {
    std::deque<std::pair<caf::typed_response_promise<msg::step_result>, msg::step_result>> waiting;
    base::job_lane gpu{"bench-gpu", 1};  // last: joined before the rest goes
  };
  auto st = std::make_shared<state>();
  const auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  return {
      [](msg::ready_atom) { return ready(); },
      [](msg::copies_wait w) {  // no host tier here: never asked
        return msg::copies_done{w.batch, false, "no copy stream"};
      },
      [](msg::lora_change&) { return msg::lora_ack{false, 400, "no LoRA here"}; },
      [self, st, weak, clock, forward_ns](msg::step_plan& p) -> caf::result<msg::step_result> {
        auto promise = self->make_response_promise<msg::step_result>();
        st->waiting.emplace_back(promise, answer(p));
        st->gpu.post([weak, clock, forward_ns, decode = decode_only(p)] {
          run_step(*clock, decode, forward_ns, [] {});
          if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak)) {
            caf::anon_send(caf::actor_cast<actors::engine_impl>(strong), msg::step_done_atom_v);
          }
        });
        return promise;
      },
      [st](msg::step_done_atom) {
        st->waiting.front().first.deliver(std::move(st->waiting.front().second));
        st->waiting.pop_front();
      },
      [](msg::copies_done_atom, std::uint64_t) {},  // no copy stream here
      [](msg::lora_parsed_atom, std::uint64_t) {},  // no LoRA here
      [](msg::lora_timeout_atom, std::uint64_t) {},
  };
}

void BM_engine_idle_between_steps(benchmark::State& state) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  {
    auto clock = std::make_shared<engine_clock>();
    const std::int64_t forward_ns = 2'000'000;  // a 2 ms decode step
    actors::engine_actor engine;
    if (state.range(0) == 2) {
      engine = sys.spawn<caf::detached>(pipelined_engine, clock, forward_ns);
    } else {
      engine = sys.spawn<caf::detached>(busy_engine, clock, forward_ns);
    }
    auto o = options();
    o.overlap = state.range(0) >= 1;
    auto sched = actors::spawn_scheduler(sys, engine, o, ready(), actors::telemetry_actor{});
    caf::scoped_actor self{sys};
    auto sink = sys.spawn(
        [](caf::event_based_actor*) -> caf::behavior { return {[](msg::token_event&) {}}; });
    for (auto _ : state) {
      run_requests(self, sched, sink, static_cast<msg::request_id>(state.iterations()) * 1000, 100,
                   std::chrono::milliseconds(5));
    }
    const auto steps = static_cast<double>(clock->steps.load());
    state.counters["steps"] = steps;
    state.counters["engine_idle_us_per_step"] =
        static_cast<double>(clock->idle_ns.load()) / 1e3 / steps;
    state.counters["decode_steps"] = static_cast<double>(clock->decode_steps.load());
    state.counters["decode_idle_us_per_step"] = static_cast<double>(clock->decode_idle_ns.load()) /
                                                1e3 /
                                                static_cast<double>(clock->decode_steps.load());
    caf::anon_send_exit(sched, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  }
}
BENCHMARK(BM_engine_idle_between_steps)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
