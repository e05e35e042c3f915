// The engine's pipeline (engine.pipeline): plans sent back to back, as the scheduler sends them
// with overlap, are launched one behind the other before the step before is answered, rows that
// follow are fed on the device, and answers go out in plan order. The device here is the sim
// behind a wrapper whose samples arrive only after a delay, as a GPU's do, so that the engine
// really has a step in flight when the next plan comes. Outputs are checked against each
// sequence generated alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "actors/engine/engine_actor.hpp"
#include "actors/telemetry/trace.hpp"
#include "gpu/forwarding_device.hpp"
#include "gpu/model/generate_one.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_engine_pipeline {

using namespace courier;

namespace {

using clock_type = std::chrono::steady_clock;

// Samples that the device "finishes" `lag` after they were enqueued. Counts how many are
// outstanding (enqueued, not yet taken) at once.
struct lag_counters {
  std::atomic<int> outstanding{0}, max_outstanding{0}, taken{0};
  int fail_take = -1;  // the take() with this index throws, as a device failure would
};

class lagging_samples final : public gpu::pending_samples {
 public:
  lagging_samples(std::shared_ptr<gpu::pending_samples> inner, clock_type::duration lag,
                  std::shared_ptr<lag_counters> c)
      : inner_(std::move(inner)), done_at_(clock_type::now() + lag), c_(std::move(c)) {
    const int now = ++c_->outstanding;
    int seen = c_->max_outstanding.load();
    while (now > seen && !c_->max_outstanding.compare_exchange_weak(seen, now)) {
    }
  }
  ~lagging_samples() override {
    if (!taken_) --c_->outstanding;
  }
  bool ready() override { return clock_type::now() >= done_at_; }
  void wait() override { std::this_thread::sleep_until(done_at_); }
  std::vector<gpu::sample_result> take() override {
    wait();
    taken_ = true;
    --c_->outstanding;
    if (c_->taken++ == c_->fail_take) throw std::runtime_error("the device failed (test)");
    return inner_->take();
  }

 private:
  std::shared_ptr<gpu::pending_samples> inner_;
  clock_type::time_point done_at_;
  std::shared_ptr<lag_counters> c_;
  bool taken_ = false;
};

class lagging_device final : public gpu::forwarding_device {
 public:
  lagging_device(std::unique_ptr<gpu::device> inner, clock_type::duration lag,
                 std::shared_ptr<lag_counters> c)
      : forwarding_device(std::move(inner)), lag_(lag), c_(std::move(c)) {}
  std::shared_ptr<gpu::pending_samples> sample_async(gpu::tensor_view logits,
                                                     const gpu::sampling_batch& batch,
                                                     std::int32_t* tokens_out) override {
    return std::make_shared<lagging_samples>(
        forwarding_device::sample_async(logits, batch, tokens_out), lag_, c_);
  }

 private:
  clock_type::duration lag_;
  std::shared_ptr<lag_counters> c_;
};

constexpr const char* model_name = "tiny-llama3";
constexpr int num_seqs = 3, num_steps = 6;

std::vector<model::token_id> prompt_of(int s) {
  std::vector<model::token_id> p;
  for (int t = 0; t < 4 + 7 * s; ++t) p.push_back(static_cast<model::token_id>(t * 13 + s + 5));
  return p;
}

msg::sampling_params sampling_of(int s) {
  msg::sampling_params p;
  p.has_seed = true;
  p.seed = 77 + static_cast<std::uint64_t>(s);
  p.temperature = s == 1 ? 0.8f : 0.0f;
  return p;
}

// Step 0 starts and prefills every sequence; step k > 0 decodes each with a row that follows
// step k - 1.
msg::step_plan plan_of(int k) {
  msg::step_plan p;
  p.step = static_cast<std::uint64_t>(k + 1);
  for (int s = 0; s < num_seqs; ++s) {
    if (k == 0) {
      msg::sequence_start st;
      st.seq = static_cast<msg::request_id>(s + 1);
      st.sampling = sampling_of(s);
      st.carries_sampling = true;
      p.starts.push_back(std::move(st));
    }
    msg::plan_row r;
    r.seq = static_cast<msg::request_id>(s + 1);
    const auto prompt = prompt_of(s);
    if (k == 0) {
      r.tokens = prompt;
    } else {
      r.tokens = {0};
      r.follows = true;
      r.decode = true;
      r.start_pos = static_cast<std::int32_t>(prompt.size()) + k - 1;
    }
    r.new_blocks = test::iota_table(2, 2 * s);  // the whole table every step (keep_blocks 0)
    r.sample = true;
    r.draw_index = static_cast<std::uint64_t>(k);
    p.rows.push_back(std::move(r));
  }
  return p;
}

// What each sequence gives alone: num_steps tokens.
std::vector<std::vector<model::token_id>> alone() {
  test::sim_model m(model_name);
  std::vector<std::vector<model::token_id>> out;
  for (int s = 0; s < num_seqs; ++s) {
    model::kv_cache cache(*m.dev, m.model->config(), 4, 16);
    model::generate_request g;
    g.prompt = prompt_of(s);
    g.max_tokens = num_steps;
    g.ignore_eos = true;
    g.sampling.temperature = sampling_of(s).temperature;
    g.sampling.seed = sampling_of(s).seed;
    out.push_back(model::generate_one(*m.model, cache, g).tokens);
  }
  return out;
}

struct run_result {
  std::vector<msg::step_result> results;  // in the order they arrived
  int max_outstanding = 0;
};

// Sends every plan at once, then collects the answers.
run_result run(bool pipeline, int fail_take = -1, int bad_plan = -1) {
  auto counters = std::make_shared<lag_counters>();
  counters->fail_take = fail_take;
  auto res = std::make_shared<actors::engine_resources>();
  res->dev = std::make_unique<lagging_device>(gpu::make_sim_device(2, 256),
                                              std::chrono::milliseconds(40), counters);
  res->model = model::llama_model::load(test::model_dir(model_name), *res->dev);
  res->cache = std::make_unique<model::kv_cache>(*res->dev, res->model->config(), 8, 16);
  gpu::workspace_limits limits;  // as the runtime's memory plan does: the next-token slots too
  limits.max_tokens = 64;
  limits.max_seqs = num_seqs;
  limits.max_kv_len = 128;
  limits.max_sample_rows = num_seqs;
  limits.block_size = 16;
  res->model->reserve(limits);
  res->max_model_len = 128;
  res->pipeline = pipeline;
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  run_result out;
  {
    actors::engine_actor engine = actors::spawn_engine(sys, res);
    caf::scoped_actor self{sys};
    for (int k = 0; k < num_steps; ++k) {
      msg::step_plan p = plan_of(k);
      if (k == bad_plan) p.rows[0].new_blocks = {99};  // outside the cache: the launch fails
      self->send(engine, std::move(p));
    }
    for (int k = 0; k < num_steps; ++k) {
      self->receive([&](msg::step_result& r) { out.results.push_back(std::move(r)); });
    }
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }
  out.max_outstanding = counters->max_outstanding.load();
  return out;
}

void require_exact(const run_result& got, const std::vector<std::vector<model::token_id>>& want) {
  REQUIRE(got.results.size() == static_cast<std::size_t>(num_steps));
  for (int k = 0; k < num_steps; ++k) {
    const msg::step_result& r = got.results[static_cast<std::size_t>(k)];
    INFO("step " << k);
    CHECK(r.step == static_cast<std::uint64_t>(k + 1));  // answered in plan order
    REQUIRE(r.error == msg::error_code::none);
    REQUIRE(r.rows.size() == static_cast<std::size_t>(num_seqs));
    for (int s = 0; s < num_seqs; ++s) {
      REQUIRE(r.rows[static_cast<std::size_t>(s)].tokens.size() == 1);
      CHECK(r.rows[static_cast<std::size_t>(s)].tokens[0] ==
            want[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)]);
    }
  }
}

}  // namespace

TEST_CASE(
    "engine pipeline: plans are launched behind the step in flight, fed on the device, "
    "and answered in order with exact outputs",
    "[engine]") {
  const auto want = alone();
  const run_result piped = run(true);
  require_exact(piped, want);
  // Each plan is launched before the step before it is answered (all of them, when the engine
  // launches faster than the 40 ms the device takes), so the device always has the next one.
  CHECK(piped.max_outstanding >= 2);

  const run_result waited = run(false);  // engine.pipeline false: one step at a time
  require_exact(waited, want);
  CHECK(waited.max_outstanding == 1);
}

TEST_CASE("engine pipeline: a failed step fails alone, in order, and the engine carries on",
          "[engine]") {
  // The device fails step 3's samples after step 4 was launched behind it: step 3 fails; the
  // rows of step 4 that followed it were fed whatever the device held (the scheduler has ended
  // their sequences by then); every step is still answered, in order.
  const run_result failed_samples = run(true, 2);
  REQUIRE(failed_samples.results.size() == static_cast<std::size_t>(num_steps));
  for (int k = 0; k < num_steps; ++k) {
    CHECK(failed_samples.results[static_cast<std::size_t>(k)].step ==
          static_cast<std::uint64_t>(k + 1));
    CHECK((failed_samples.results[static_cast<std::size_t>(k)].error ==
           msg::error_code::engine_failure) == (k == 2));
  }
  CHECK_THAT(failed_samples.results[2].message, Catch::Contains("the device failed"));

  // Step 3 fails to launch (a block outside the cache): its answer is an error, the rows of
  // step 4 that follow it have nothing to be fed and come back as errors, and the steps after
  // those (following step 4, which sampled nothing for them) do too.
  const run_result failed_launch = run(true, -1, 2);
  REQUIRE(failed_launch.results.size() == static_cast<std::size_t>(num_steps));
  const auto& r = failed_launch.results;
  CHECK(r[2].error == msg::error_code::engine_failure);
  CHECK_THAT(r[2].message, Catch::Contains("out of range"));
  for (int k = 3; k < num_steps; ++k) {
    INFO("step " << k);
    CHECK(r[static_cast<std::size_t>(k)].step == static_cast<std::uint64_t>(k + 1));
    CHECK(r[static_cast<std::size_t>(k)].error == msg::error_code::none);
    REQUIRE(r[static_cast<std::size_t>(k)].rows.size() == static_cast<std::size_t>(num_seqs));
    for (const msg::row_result& row : r[static_cast<std::size_t>(k)].rows) {
      CHECK(row.tokens.empty());
      CHECK(row.error == msg::error_code::engine_failure);
      CHECK_THAT(row.message, Catch::Contains("the step this row follows failed"));
    }
  }
  const auto want = alone();
  for (int k = 0; k < 2; ++k) {
    CHECK(r[static_cast<std::size_t>(k)].rows[0].tokens[0] == want[0][static_cast<std::size_t>(k)]);
  }
}

TEST_CASE("engine pipeline: a step's trace span runs from its launch until the device is seen "
          "done with it, on the device's lane, where steps never overlap",
          "[engine][telemetry]") {
  std::vector<telemetry::span> spans;
  while (telemetry::drain(spans, 4096) > 0) spans.clear();  // whatever earlier tests left
  telemetry::start_tracing(1.0, std::size_t{1} << 20);
  const run_result piped = run(true);
  telemetry::stop_tracing();
  while (telemetry::drain(spans, 4096) > 0) {
  }
  require_exact(piped, alone());
  std::map<std::uint64_t, telemetry::span> launch, device;
  for (const telemetry::span& s : spans) {
    if (std::string(s.actor) != "engine") continue;
    if (std::string(s.message) == "step_launch") CHECK(launch.emplace(s.step, s).second);
    if (std::string(s.message) == "step_plan") CHECK(device.emplace(s.step, s).second);
  }
  REQUIRE(launch.size() == static_cast<std::size_t>(num_steps));
  REQUIRE(device.size() == static_cast<std::size_t>(num_steps));
  const std::int64_t lag_ns = std::chrono::nanoseconds(std::chrono::milliseconds(40)).count();
  std::int64_t previous_end = 0;
  for (std::uint64_t step = 1; step <= static_cast<std::uint64_t>(num_steps); ++step) {
    INFO("step " << step);
    const telemetry::span& l = launch.at(step);
    const telemetry::span& d = device.at(step);
    CHECK(d.thread != l.thread);  // a lane of its own, not the engine thread's
    CHECK(d.thread == device.at(1).thread);
    CHECK(d.rows == num_seqs);
    CHECK(d.start_ns >= l.start_ns);
    CHECK(d.start_ns >= previous_end);  // after the step before it on the device
    // The device gives the step's samples 40 ms after its launch: the span reaches past them
    // (a span of the launch alone ends within a few ms: the engine does not wait for them).
    CHECK(d.start_ns + d.duration_ns >= l.start_ns + lag_ns);
    CHECK(l.duration_ns < d.start_ns + d.duration_ns - l.start_ns);
    previous_end = d.start_ns + d.duration_ns;
  }
}

}  // namespace courier_test_actors_engine_engine_pipeline
