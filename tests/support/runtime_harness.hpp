#pragma once
// Drives a real runtime (actor system, engine on the sim backend, scheduler) from a test:
// submits requests with a scoped_actor as reply_to and collects every token_event.
#include <caf/all.hpp>

#include <chrono>
#include <thread>

#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "actors/runtime/runtime.hpp"
#include "tests/support/cuda_backend.hpp"
#include "tests/support/fixtures.hpp"

namespace courier::test {

struct request_outcome {
  std::vector<msg::token_id> tokens;
  std::vector<msg::token_logprob> logprobs;
  msg::token_event last;  // the final event
  int num_events = 0;
};

// The integration tests' server config: the sim backend, unless COURIER_TEST_BACKEND names
// another (cuda on a GPU machine). Outputs are compared with the sim reference through
// reference_match.hpp: bit for bit on sim, up to bf16 numerics elsewhere.
inline config::server_config sim_config(const std::string& model_name) {
  config::server_config c;
  c.model.path = model_dir(model_name);
  const char* backend = std::getenv("COURIER_TEST_BACKEND");
  c.device.backend = backend && *backend ? backend : "sim";
  c.device.sim.threads = 2;
  c.device.sim.memory_mb = 512;
  c.scheduler.num_kv_blocks = 512;
  return c;
}

// For a hybrid model (Mamba-2 layers): on a GPU the sim backend whatever COURIER_TEST_BACKEND
// says, for the CUDA backend refuses hybrids until its Mamba-2 kernels have run on one
// (device::runs_mamba; their [gpu] tests hold them to the sim ops meanwhile). The emulated CUDA
// backend (cuda_backend.hpp) runs them.
inline config::server_config hybrid_config(const std::string& model_name) {
  config::server_config c = sim_config(model_name);
  if (!cuda_emulated()) c.device.backend = "sim";
  return c;
}

// Tensor parallelism over `ranks` devices of the test backend: the sim's, or the emulator's
// (ctest gives the emulated tests four devices). A GPU machine lends one GPU: there the ranks
// are sim devices.
inline config::server_config tp_config(config::server_config c, int ranks) {
  if (!cuda_emulated()) c.device.backend = "sim";
  c.parallel.tensor_size = ranks;
  return c;
}

class harness {
 public:
  explicit harness(const config::server_config& cfg) : rt_(cfg), self_(rt_.system()) {}

  actors::runtime& rt() { return rt_; }

  void submit(msg::submit s) {
    s.reply_to = caf::actor_cast<caf::actor>(self_);
    outcomes_[s.id];
    ++pending_;
    self_->send(rt_.scheduler(), std::move(s));
  }
  void cancel(msg::request_id id) { self_->send(rt_.scheduler(), msg::cancel{id}); }

  // Receives events until every submitted request has ended. on_event (optional) sees each
  // event first, e.g. to cancel at a chosen moment.
  std::map<msg::request_id, request_outcome>& wait_all(
      const std::function<void(const msg::token_event&)>& on_event = {}) {
    self_->receive_while([&] { return pending_ > 0; })([&](msg::token_event& e) {
      if (on_event) on_event(e);
      request_outcome& o = outcomes_.at(e.id);
      ++o.num_events;
      o.tokens.insert(o.tokens.end(), e.tokens.begin(), e.tokens.end());
      o.logprobs.insert(o.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
      if (e.finish != msg::finish_reason::none) {
        o.last = std::move(e);
        --pending_;
      }
    });
    return outcomes_;
  }

  msg::scheduler_stats stats() { return ask(msg::stats_atom_v); }
  // The stats once the copy stream's batches and the disk tier's copies have all answered (the
  // host and disk tiers' write-through goes on after the requests end).
  msg::scheduler_stats settled_stats() {
    msg::scheduler_stats s = stats();
    for (int i = 0; i < 2000 && (s.disk_ops_in_flight > 0 || s.copy_batches_in_flight > 0);
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = stats();
    }
    REQUIRE(s.disk_ops_in_flight == 0);
    REQUIRE(s.copy_batches_in_flight == 0);
    return s;
  }
  // Evicts every cached block once the copies have settled (a batch in flight holds its blocks).
  msg::scheduler_stats drain() {
    (void)settled_stats();
    return ask(msg::drain_atom_v);
  }

 private:
  template <class Atom>
  msg::scheduler_stats ask(Atom a) {
    msg::scheduler_stats out;
    self_->request(rt_.scheduler(), caf::infinite, a)
        .receive([&](msg::scheduler_stats& s) { out = s; }, [](caf::error&) {});
    return out;
  }

  actors::runtime rt_;
  caf::scoped_actor self_;
  std::map<msg::request_id, request_outcome> outcomes_;
  int pending_ = 0;
};

}  // namespace courier::test
