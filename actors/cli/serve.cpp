// courier serve: the OpenAI-compatible server until SIGINT or SIGTERM.
#include <signal.h>

#include <chrono>
#include <cstdio>

#include "actors/admission/admission_server.hpp"
#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "actors/runtime/runtime.hpp"
#include "actors/runtime/worker_priority.hpp"

namespace courier::cli {

namespace {

constexpr const char* serve_help =
    "usage: courier serve [--config FILE] [--model DIR] [--set key=value]...\n"
    "Serves the OpenAI API (/v1/completions, /v1/chat/completions, /v1/models, /health,\n"
    "/tokenize, /detokenize, /metrics, /server_info, the web page at /) until SIGINT or SIGTERM,\n"
    "then finishes in-flight requests (up to --grace-s seconds, default 30) and exits 0.\n";

}  // namespace

int run_serve(int argc, char** argv) {
  // Block the stop signals in every thread (the mask is inherited), and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    args a(argc, argv, 2, {"config", "model", "backend", "grace-s"}, {"help"});
    if (a.has("help")) {
      std::fputs(serve_help, stdout);
      return 0;
    }
    std::vector<std::string> sets = a.sets();
    if (auto m = a.get("model")) sets.insert(sets.begin(), "model.path=" + *m);
    if (auto b = a.get("backend")) sets.insert(sets.begin(), "device.backend=" + *b);
    const config::server_config cfg = config::load_config(a.get_or("config", ""), sets);
    const auto grace = std::chrono::seconds(a.get_int("grace-s").value_or(30));

    actors::runtime rt(cfg);
    auto ctx = std::make_shared<admission::admission_context>();
    ctx->scheduler = rt.scheduler();
    ctx->telemetry = rt.telemetry();
    admission::configure_context(*ctx, cfg, rt.ready());
    if (ctx->grammars) {  // a replica compiles the grammars a front end sends as GBNF text
      rt.set_wire_grammars([g = ctx->grammars](const std::string& gbnf) {
        return g->get({admission::grammar_spec::kind::gbnf, gbnf, false});
      });
    }
    {
      // The text threads (parsing, templates, tokenizing) yield the CPU as CAF's workers do;
      // those of bodies over 1 MiB run only on CPU time nothing else wants (SCHED_IDLE, else nice
      // 19) when admission is niced.
      const int nice = cfg.server.admission_nice;
      admission::admission_server server(
          rt.system(), ctx, cfg, [nice] { actors::lower_current_thread_priority(nice); },
          [nice] {
            if (nice > 0 && !actors::run_current_thread_when_idle()) {
              actors::lower_current_thread_priority(19);
            }
          });
      std::printf("courier: serving %s at http://%s:%u/v1 (%s, %d KV blocks%s)\n",
                  ctx->model_name.c_str(), cfg.server.host.c_str(), server.port(),
                  rt.ready().device_name.c_str(), rt.ready().num_kv_blocks,
                  ctx->tok ? "" : ", no tokenizer: token ids only");
      std::fflush(stdout);
      int sig = 0;
      sigwait(&stop_signals, &sig);
      std::printf("courier: %s received, finishing in-flight requests\n",
                  sig == SIGINT ? "SIGINT" : "SIGTERM");
      std::fflush(stdout);
      server.stop(grace);
    }
    ctx->scheduler = nullptr;  // no handle may outlive the actor system
    ctx->telemetry = nullptr;
    std::printf("courier: stopped\n");
    return 0;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "courier serve: %s\n%s", e.what(), serve_help);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "courier serve: %s\n", e.what());
    return 1;
  }
}

}  // namespace courier::cli
