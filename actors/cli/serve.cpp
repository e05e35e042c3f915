// courier serve: the OpenAI-compatible server until SIGINT, SIGTERM or SIGHUP.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

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
    "/tokenize, /detokenize, /metrics, /server_info, the web page at /) until SIGINT, SIGTERM\n"
    "or SIGHUP, then finishes in-flight requests (up to --grace-s seconds, default 30) and\n"
    "exits 0. A second such signal, or one while the server is still starting, exits at once.\n"
    "SIGUSR1 and SIGUSR2 are logged and ignored; SIGPIPE is ignored.\n";

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
  }
}

// The signals serve acts on, blocked in every thread (the mask is inherited) and taken by one
// thread of their own with sigwait: a stop signal before the server is up (a model still
// loading) or during the grace period ends the process at once; the first one after it is up
// wakes wait_for_stop(). SIGPIPE (a client gone mid-write) is ignored, as every server does.
class signal_watch {
 public:
  signal_watch() {
    ::signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set_);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    std::thread([this] { run(); }).detach();  // it may be in sigwait at exit: nothing to join
  }

  void serving() {
    std::lock_guard<std::mutex> lock(mu_);
    up_ = true;
  }
  // The stop signal, once one came after serving().
  int wait_for_stop() {
    std::unique_lock<std::mutex> lock(mu_);
    woken_.wait(lock, [this] { return stop_ != 0; });
    return stop_;
  }

 private:
  void run() {
    for (;;) {
      int sig = 0;
      if (sigwait(&set_, &sig) != 0) continue;
      if (sig == SIGUSR1 || sig == SIGUSR2) {
        std::fprintf(stderr, "courier: %s received and ignored\n", signal_name(sig));
        continue;
      }
      std::unique_lock<std::mutex> lock(mu_);
      if (!up_ || stop_ != 0) {
        std::fprintf(stderr, "courier: %s received %s; exiting now\n", signal_name(sig),
                     up_ ? "again while finishing" : "while starting");
        std::fflush(nullptr);
        std::_Exit(1);
      }
      stop_ = sig;
      woken_.notify_all();
    }
  }

  sigset_t set_;
  std::mutex mu_;
  std::condition_variable woken_;
  bool up_ = false;
  int stop_ = 0;
};

}  // namespace

int run_serve(int argc, char** argv) {
  static signal_watch signals;  // before any other thread starts
  return run_command(
      "serve",
      [&]() -> int {
        args a(argc, argv, 2, {"config", "model", "backend", "grace-s"}, {"help"});
        if (a.has("help")) {
          std::fputs(serve_help, stdout);
          return 0;
        }
        const config::server_config cfg =
            config::load_config(a.get_or("config", ""), config_sets(a, a.get("model")));
        const auto grace = std::chrono::seconds(a.get_int("grace-s").value_or(30));

        actors::runtime rt(cfg);
        auto ctx = std::make_shared<admission::admission_context>();
        ctx->scheduler = rt.scheduler();
        ctx->telemetry = rt.telemetry();
        admission::configure_context(*ctx, cfg, rt.ready());
        if (ctx->grammars) {  // a replica compiles the grammars a front end sends as GBNF text
          rt.set_wire_grammars([ctx](const std::string& gbnf, const std::string& tenant) {
            return ctx->grammars->get({admission::grammar_spec::kind::gbnf, gbnf, false},
                                      admission::grammar_scope(*ctx, tenant));
          });
        }
        {
          // The text threads (parsing, templates, tokenizing) yield the CPU as CAF's workers do;
          // those of bodies over 1 MiB run only on CPU time nothing else wants (SCHED_IDLE, else
          // nice 19) when admission is niced.
          const int nice = cfg.server.admission_nice;
          admission::admission_server server(
              rt.system(), ctx, cfg, [nice] { actors::lower_current_thread_priority(nice); },
              [nice] {
                if (nice > 0 && !actors::run_current_thread_when_idle()) {
                  actors::lower_current_thread_priority(19);
                }
              });
          signals.serving();
          std::printf("courier: serving %s at http://%s:%u/v1 (%s, %d KV blocks%s)\n",
                      ctx->model_name.c_str(), cfg.server.host.c_str(), server.port(),
                      rt.ready().device_name.c_str(), rt.ready().num_kv_blocks,
                      ctx->tok ? "" : ", no tokenizer: token ids only");
          std::fflush(stdout);
          const int sig = signals.wait_for_stop();
          std::printf("courier: %s received, finishing in-flight requests\n", signal_name(sig));
          std::fflush(stdout);
          server.stop(grace);
        }
        ctx->scheduler = nullptr;  // no handle may outlive the actor system
        ctx->telemetry = nullptr;
        std::printf("courier: stopped\n");
        return 0;
      },
      serve_help);
}

}  // namespace courier::cli
