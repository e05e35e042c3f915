// The engine actor: a failing step is an error result, and the engine keeps serving.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>

#include "actors/engine/engine_actor.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_engine_actor {

using namespace courier;

namespace {

// tiny-qwen2 on a sim device, 8 KV blocks of 16 tokens, max_model_len 128, 4 sequence slots.
std::shared_ptr<actors::engine_resources> tiny_resources() {
  auto res = std::make_shared<actors::engine_resources>();
  res->dev = gpu::make_sim_device(2, 256);
  res->model = model::llama_model::load(test::model_dir("tiny-qwen2"), *res->dev);
  res->cache = std::make_unique<model::kv_cache>(*res->dev, res->model->config(), 8, 16);
  res->model->reserve_slots(4, 128, 16);  // as reserve() makes them: the rows' device state
  res->max_model_len = 128;
  return res;
}

// courier's messages, two worker threads.
void configure(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
}

}  // namespace

TEST_CASE("engine: a step that fails is an error result and the next step runs", "[engine]") {
  auto res = tiny_resources();
  caf::actor_system_config cfg;
  configure(cfg);
  caf::actor_system sys{cfg};
  {
    auto engine = actors::spawn_engine(sys, res);
    caf::scoped_actor self{sys};
    auto run = [&](msg::step_plan p) {
      msg::step_result out;
      self->request(engine, caf::infinite, std::move(p))
          .receive([&](msg::step_result& r) { out = std::move(r); }, [](caf::error&) {});
      return out;
    };
    msg::sequence_start start;
    start.seq = 7;
    start.sampling.temperature = 0;
    start.carries_sampling = true;
    msg::plan_row row;
    row.seq = 7;
    row.tokens = {1, 2, 3};
    row.new_blocks = {99};  // outside the 8-block cache
    row.sample = true;
    auto bad = run({1, {row}, {start}});
    CHECK(bad.error == msg::error_code::engine_failure);
    CHECK_THAT(bad.message, Catch::Contains("out of range"));

    row.new_blocks = {0};  // keep_blocks 0: replaces the table
    auto good = run({2, {row}});
    CHECK(good.error == msg::error_code::none);
    REQUIRE(good.rows.size() == 1);
    CHECK(good.rows[0].seq == 7);
    CHECK(good.rows[0].tokens.size() == 1);

    // Parameters are sent once, with the start: later rows sample with the kept ones.
    msg::plan_row next;
    next.seq = 7;
    next.tokens = {good.rows[0].tokens[0]};
    next.start_pos = 3;
    next.keep_blocks = 1;
    next.sample = true;
    auto kept = run({3, {next}});
    REQUIRE(kept.error == msg::error_code::none);
    REQUIRE(kept.rows.size() == 1);
    CHECK(kept.rows[0].tokens.size() == 1);
    CHECK(kept.rows[0].logprobs.empty());
    // A sequence with no start, or whose parameters never came, fails the step, clearly.
    msg::plan_row stranger = next;
    stranger.seq = 8;
    stranger.keep_blocks = 0;
    stranger.new_blocks = {1};
    stranger.start_pos = 0;
    auto unknown = run({4, {stranger}});
    CHECK(unknown.error == msg::error_code::engine_failure);
    CHECK_THAT(unknown.message, Catch::Contains("sequence 8 has a row and no start"));
    msg::sequence_start bare;
    bare.seq = 8;
    auto refused = run({5, {stranger}, {bare}});
    CHECK(refused.error == msg::error_code::engine_failure);
    CHECK_THAT(refused.message, Catch::Contains("sampling parameters"));
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("engine: an adapter read that hangs is answered 504 after lora.load_timeout_s, and "
          "neither the engine nor its shutdown waits for it",
          "[engine][lora]") {
  auto res = tiny_resources();
  res->adapter_dirs["x"] = {"/hung/file/system", 1};
  res->lora_load_timeout_s = 1;
  // A read that blocks until the test ends, as one from a hung file system would.
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> gate = release->get_future().share();
  auto reads = std::make_shared<std::atomic<int>>(0);
  res->read_adapter = [gate, reads](const std::string&, const std::string&,
                                    const model::model_config&,
                                    std::int32_t) -> std::shared_ptr<const model::lora_adapter> {
    ++*reads;
    gate.wait();
    throw model::model_error("released");
  };
  caf::actor_system_config cfg;
  configure(cfg);
  const auto started = std::chrono::steady_clock::now();
  {
    caf::actor_system sys{cfg};
    auto engine = actors::spawn_engine(sys, res);
    caf::scoped_actor self{sys};
    msg::lora_ack ack;
    self->request(engine, std::chrono::seconds(30),
                  msg::lora_change{msg::lora_change::stage, "x", ""})
        .receive([&](msg::lora_ack& a) { ack = a; }, [](caf::error&) {});
    CHECK_FALSE(ack.ok);
    CHECK(ack.status == 504);
    CHECK_THAT(ack.error, Catch::Contains("/hung/file/system") &&
                              Catch::Contains("lora.load_timeout_s (1 s)"));
    CHECK(*reads == 1);
    // The engine still steps meanwhile.
    msg::sequence_start start;
    start.seq = 7;
    start.sampling.temperature = 0;
    start.carries_sampling = true;
    msg::plan_row row;
    row.seq = 7;
    row.tokens = {1, 2, 3};
    row.new_blocks = {0};
    row.sample = true;
    msg::step_result out;
    self->request(engine, caf::infinite, msg::step_plan{1, {row}, {start}})
        .receive([&](msg::step_result& r) { out = std::move(r); }, [](caf::error&) {});
    CHECK(out.error == msg::error_code::none);
    anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }  // the actor system ends here, the read still blocked
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  release->set_value();  // the detached read ends now, unheard
}

TEST_CASE("engine: a registered adapter read again whose files changed is refused (409), "
          "one whose files are the same is staged",
          "[engine][lora]") {
  // Its cached KV entries are keyed by the fingerprint it was loaded with: a host copy read
  // again from changed files would serve another adapter's weights under those entries.
  auto res = tiny_resources();
  res->adapter_dirs["x"] = {"/adapters/x", 41};
  auto now_reads = std::make_shared<std::atomic<std::uint64_t>>(42);  // what the files hash to
  res->read_adapter = [now_reads](const std::string& name, const std::string& dir,
                                  const model::model_config&,
                                  std::int32_t) -> std::shared_ptr<const model::lora_adapter> {
    auto a = std::make_shared<model::lora_adapter>();
    a->name = name;
    a->dir = dir;
    a->fingerprint = *now_reads;
    return a;
  };
  caf::actor_system_config cfg;
  configure(cfg);
  caf::actor_system sys{cfg};
  auto engine = actors::spawn_engine(sys, res);
  caf::scoped_actor self{sys};
  auto stage = [&] {
    msg::lora_ack ack;
    self->request(engine, std::chrono::seconds(30),
                  msg::lora_change{msg::lora_change::stage, "x", ""})
        .receive([&](msg::lora_ack& a) { ack = a; }, [](caf::error&) {});
    return ack;
  };
  const msg::lora_ack changed = stage();
  CHECK_FALSE(changed.ok);
  CHECK(changed.status == 409);
  CHECK_THAT(changed.error, Catch::Contains("/adapters/x") && Catch::Contains("changed"));
  *now_reads = 41;  // the files as they were loaded
  const msg::lora_ack same = stage();
  CHECK(same.ok);
  CHECK(same.fingerprint == 41);
  anon_send_exit(engine, caf::exit_reason::user_shutdown);
}

}  // namespace courier_test_actors_engine_engine_actor
