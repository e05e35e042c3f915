// Prompt lookup on vs off through the whole runtime (actors, scheduler, engine) on a copy-heavy
// workload: each prompt holds a block of "code" and then starts repeating it with one change, so
// continuing means copying. Prints steps, accepted drafts per step, the steps saved and tokens/s
// at concurrency 1 and 32; checks that both runs produced the same tokens. Figures only.
//
// usage: prompt_lookup_bench [MODEL_DIR] [--backend sim|cuda] [--max-tokens N]
#include <caf/all.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <map>
#include <random>

#include "actors/runtime/runtime.hpp"
#include "actors/scheduler/scheduler_actor.hpp"

using namespace courier;

namespace {

struct run_result {
  double seconds = 0;
  std::uint64_t steps = 0, generated = 0, drafts = 0, draft_tokens = 0, accepted = 0;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
};

std::vector<msg::submit> workload(int n, int max_tokens, std::int32_t vocab) {
  std::mt19937 rng(2024);
  std::vector<msg::submit> out;
  for (int i = 0; i < n; ++i) {
    std::vector<msg::token_id> code;
    for (int t = 0; t < 160; ++t) code.push_back(static_cast<msg::token_id>(rng() % vocab));
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    s.tenant = "bench";
    s.prompt = code;                                    // the original
    s.prompt.push_back(static_cast<msg::token_id>(rng() % vocab));  // "now repeat it, changed:"
    std::vector<msg::token_id> changed = code;
    changed[40] = static_cast<msg::token_id>(rng() % vocab);
    s.prompt.insert(s.prompt.end(), changed.begin(), changed.begin() + 60);  // part-way through
    s.max_tokens = max_tokens;
    s.ignore_eos = true;
    s.sampling.temperature = 0;
    out.push_back(s);
  }
  return out;
}

run_result run(config::server_config cfg, bool lookup, const std::vector<msg::submit>& reqs,
               int concurrency) {
  cfg.speculative.prompt_lookup.enabled = lookup;
  actors::runtime rt(cfg);
  caf::scoped_actor self{rt.system()};
  auto stats = [&] {
    msg::scheduler_stats s;
    self->request(rt.scheduler(), caf::infinite, msg::stats_atom_v)
        .receive([&](msg::scheduler_stats& x) { s = x; }, [](caf::error&) {});
    return s;
  };
  run_result r;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t next = 0, running = 0;
  auto submit_more = [&] {
    while (running < static_cast<std::size_t>(concurrency) && next < reqs.size()) {
      msg::submit s = reqs[next++];
      s.reply_to = caf::actor_cast<caf::actor>(self);
      self->send(rt.scheduler(), std::move(s));
      ++running;
    }
  };
  submit_more();
  self->receive_while([&] { return running > 0; })([&](msg::token_event& e) {
    auto& t = r.tokens[e.id];
    t.insert(t.end(), e.tokens.begin(), e.tokens.end());
    if (e.finish != msg::finish_reason::none) {
      --running;
      submit_more();
    }
  });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto s = stats();
  r.steps = s.num_steps;
  r.generated = s.generated_tokens;
  r.drafts = s.spec_drafts;
  r.draft_tokens = s.spec_draft_tokens_own + s.spec_draft_tokens_shared;
  r.accepted = s.spec_accepted_own + s.spec_accepted_shared;
  return r;
}

// The same workload against an oracle engine that copies perfectly (what a real model does on
// such a prompt), answering at once: the ceiling of what prompt lookup saves in steps.
using text_map = std::map<msg::request_id, std::vector<msg::token_id>>;

actors::engine_actor::behavior_type oracle_engine(actors::engine_actor::pointer,
                                                  std::shared_ptr<const text_map> texts,
                                                  msg::engine_ready ready) {
  return {
      [ready](msg::ready_atom) { return ready; },
      [](msg::copies_wait w) {  // no host tier here: never asked
        return msg::copies_done{w.batch, false, "no copy stream"};
      },
      [](msg::lora_change&) { return msg::lora_ack{false, 400, "no LoRA here"}; },
      [texts](msg::step_plan& p) {
        msg::step_result r;
        r.step = p.step;
        for (const auto& row : p.rows) {
          msg::row_result rr;
          rr.seq = row.seq;
          const auto& t = texts->at(row.seq);
          const auto n = static_cast<std::int32_t>(row.tokens.size());
          for (std::int32_t j = n - 1 - row.num_drafts; row.sample && j < n; ++j) {
            const auto pos = static_cast<std::size_t>(row.start_pos + j + 1);
            rr.tokens.push_back(t[pos % t.size()]);
            if (j + 1 >= n || row.tokens[static_cast<std::size_t>(j + 1)] != rr.tokens.back()) break;
          }
          r.rows.push_back(std::move(rr));
        }
        return r;
      },
  };
}

run_result run_oracle(bool lookup, const std::vector<msg::submit>& reqs, std::int32_t vocab) {
  auto texts = std::make_shared<text_map>();
  for (const auto& s : reqs) {
    std::vector<msg::token_id> t = s.prompt;  // the changed copy goes on from where it stopped
    const std::vector<msg::token_id> code(s.prompt.begin(), s.prompt.begin() + 160);
    for (std::size_t i = 60; i < 160; ++i) t.push_back(i == 40 ? s.prompt[161 + 40] : code[i]);
    (*texts)[s.id] = t;
  }
  msg::engine_ready ready;
  ready.num_kv_blocks = 4096;
  ready.block_size = 16;
  ready.vocab_size = vocab;
  ready.max_model_len = 4096;
  ready.model_name = "oracle";
  actors::scheduler_options o;
  o.lookup.enabled = lookup;
  o.lookup.num_draft = 8;
  o.lookup.shared.ngram.min_n = 2;
  o.lookup.shared.ngram.max_n = 4;
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  run_result r;
  {
    auto engine = sys.spawn(oracle_engine, std::shared_ptr<const text_map>(texts), ready);
    auto sched = actors::spawn_scheduler(sys, engine, o, ready, actors::telemetry_actor{});
    caf::scoped_actor self{sys};
    std::size_t running = 0;
    for (auto s : reqs) {
      s.reply_to = caf::actor_cast<caf::actor>(self);
      self->send(sched, std::move(s));
      ++running;
    }
    self->receive_while([&] { return running > 0; })([&](msg::token_event& e) {
      if (e.finish != msg::finish_reason::none) --running;
    });
    self->request(sched, caf::infinite, msg::stats_atom_v)
        .receive(
            [&](msg::scheduler_stats& s) {
              r.steps = s.num_steps;
              r.generated = s.generated_tokens;
              r.drafts = s.spec_drafts;
              r.accepted = s.spec_accepted_own + s.spec_accepted_shared;
            },
            [](caf::error&) {});
    caf::anon_send_exit(sched, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  config::server_config cfg;
  cfg.model.path = "tests/data/models/tiny-llama3";
  cfg.device.backend = "sim";
  cfg.device.sim.threads = 2;
  cfg.device.sim.memory_mb = 1024;
  cfg.scheduler.num_kv_blocks = 2048;
  cfg.speculative.prompt_lookup.num_draft = 8;
  cfg.speculative.shared_cache_mb = 64;
  int max_tokens = 128;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc) {
      cfg.device.backend = argv[++i];
    } else if (!std::strcmp(argv[i], "--max-tokens") && i + 1 < argc) {
      max_tokens = std::atoi(argv[++i]);
    } else {
      cfg.model.path = argv[i];
    }
  }
  std::int32_t vocab = 0;
  {
    actors::runtime probe(cfg);
    vocab = probe.ready().vocab_size;
  }
  fmt::print("prompt lookup, copy-heavy workload, {} ({}), greedy, {} tokens per request\n",
             cfg.model.path, cfg.device.backend, max_tokens);
  fmt::print("{:>11} {:>6} {:>7} {:>8} {:>9} {:>12} {:>10} {:>9} {:>8}\n", "concurrency",
             "lookup", "steps", "tokens", "tok/step", "accepted/row", "acc rate", "tok/s",
             "same");
  for (int concurrency : {1, 32}) {
    const auto reqs = workload(concurrency == 1 ? 4 : 64, max_tokens, vocab);
    const run_result off = run(cfg, false, reqs, concurrency);
    const run_result on = run(cfg, true, reqs, concurrency);
    for (const run_result* r : {&off, &on}) {
      const bool is_on = r == &on;
      fmt::print("{:>11} {:>6} {:>7} {:>8} {:>9.2f} {:>12} {:>10} {:>9.0f} {:>8}\n", concurrency,
                 is_on ? "on" : "off", r->steps, r->generated,
                 static_cast<double>(r->generated) / static_cast<double>(r->steps),
                 is_on ? fmt::format("{:.2f}", static_cast<double>(r->accepted) /
                                                   static_cast<double>(std::max<std::uint64_t>(1, r->drafts)))
                       : "-",
                 is_on ? fmt::format("{:.0f}%", 100.0 * static_cast<double>(r->accepted) /
                                                    static_cast<double>(std::max<std::uint64_t>(1, r->draft_tokens)))
                       : "-",
                 static_cast<double>(r->generated) / r->seconds,
                 is_on ? (on.tokens == off.tokens ? "yes" : "NO") : "");
    }
    fmt::print("{:>11} steps saved: {:.1f}%\n", "",
               100.0 * (1.0 - static_cast<double>(on.steps) / static_cast<double>(off.steps)));
  }
  fmt::print("\noracle engine that copies perfectly (the ceiling), 64 requests at once\n");
  const auto reqs = workload(64, max_tokens, vocab);
  const run_result off = run_oracle(false, reqs, vocab), on = run_oracle(true, reqs, vocab);
  fmt::print("  steps off {}, on {} ({:.1f}% saved); accepted drafts per draft row {:.2f}; "
             "tokens per request per step {:.2f}\n",
             off.steps, on.steps,
             100.0 * (1.0 - static_cast<double>(on.steps) / static_cast<double>(off.steps)),
             static_cast<double>(on.accepted) / static_cast<double>(std::max<std::uint64_t>(1, on.drafts)),
             static_cast<double>(on.generated) / 64.0 /
                 static_cast<double>(std::max<std::uint64_t>(1, on.steps)));
  return 0;
}
