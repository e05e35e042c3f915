// The runtime's actors and CAF's worker threads: the scheduler (like the engine) runs on a
// thread of its own, so request actors that keep every worker busy (parsing, templating,
// tokenizing large prompts) cannot stall the token streams of requests already running.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "tests/support/runtime_harness.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_runtime_runtime {

using namespace courier;

TEST_CASE("runtime: a request is served while every CAF worker thread is busy",
          "[integration][scheduler]") {
  const int workers = 3;  // server.actor_threads (not its default, 2)
  auto cfg = test::sim_config("tiny-llama3");
  cfg.server.actor_threads = workers;
  actors::runtime rt(cfg);
  auto& sys = rt.system();
  CHECK(sys.scheduler().num_workers() == static_cast<std::size_t>(workers));
  // Occupy every worker with a handler that blocks until the test releases it, as a burst of
  // admission work would (the gate opens on every path, so teardown never hangs).
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> blocked{0};
  for (int i = 0; i < workers; ++i) {
    // The state goes in as spawn arguments, not captures: CAF 0.17 dereferences a null
    // argument tuple for a function actor spawned without arguments (UBSan reports it).
    auto blocker = sys.spawn(
        [](caf::event_based_actor* self, std::shared_future<void> gate,
           std::atomic<int>* blocked) -> caf::behavior {
          return {[self, gate, blocked](caf::ok_atom) {
            ++*blocked;
            gate.wait();
            self->quit();
          }};
        },
        gate, &blocked);
    caf::anon_send(blocker, caf::ok_atom_v);
  }
  for (int i = 0; i < 1000 && blocked.load() < workers; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bool timed_out = false;
  std::vector<msg::token_id> tokens;
  msg::finish_reason finish = msg::finish_reason::none;
  {
    caf::scoped_actor self{sys};  // its own thread: the test's
    msg::submit s;
    s.id = 1;
    s.prompt = {5, 6, 7};
    s.max_tokens = 8;
    s.ignore_eos = true;
    s.reply_to = caf::actor_cast<caf::actor>(self);
    if (blocked.load() == workers) {
      self->send(rt.scheduler(), std::move(s));
      self->receive_while([&] { return finish == msg::finish_reason::none && !timed_out; })(
          [&](msg::token_event& e) {
            tokens.insert(tokens.end(), e.tokens.begin(), e.tokens.end());
            finish = e.finish;
          },
          caf::after(std::chrono::seconds(30)) >> [&] { timed_out = true; });
    }
  }
  const int were_blocked = blocked.load();
  release.set_value();
  REQUIRE(were_blocked == workers);
  CHECK_FALSE(timed_out);
  CHECK(finish == msg::finish_reason::length);
  CHECK(tokens.size() == 8);
}

TEST_CASE("runtime: a shared lookup cache whose scopes' shares are too small stops the start, "
          "naming both keys",
          "[scheduler]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.speculative.prompt_lookup.enabled = true;
  cfg.speculative.shared_cache_mb = 1;
  cfg.speculative.shared_cache_scopes = 64;  // 16 KB a scope
  try {
    actors::runtime rt(cfg);
    FAIL("the runtime started");
  } catch (const config::config_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("speculative.shared_cache_mb: 1 MB") &&
                             Catch::Contains("speculative.shared_cache_scopes 64"));
  }
  cfg.speculative.shared_cache_scopes = 4;  // 256 KB a scope: starts
  CHECK_NOTHROW(actors::runtime(cfg));
}

}  // namespace courier_test_actors_runtime_runtime
