// The engine actor: a failing step is an error result, and the engine keeps serving.
#include <catch2/catch.hpp>

#include "actors/engine/engine_actor.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_engine_actor {

using namespace courier;

TEST_CASE("engine: a step that fails is an error result and the next step runs", "[engine]") {
  auto res = std::make_shared<actors::engine_resources>();
  res->dev = gpu::make_sim_device(2, 256);
  res->model = model::llama_model::load(test::model_dir("tiny-qwen2"), *res->dev);
  res->cache = std::make_unique<model::kv_cache>(*res->dev, res->model->config(), 8, 16);
  res->max_model_len = 128;
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  {
    auto engine = sys.spawn<caf::detached>(actors::engine_fn, res);
    caf::scoped_actor self{sys};
    auto run = [&](msg::step_plan p) {
      msg::step_result out;
      self->request(engine, caf::infinite, std::move(p))
          .receive([&](msg::step_result& r) { out = std::move(r); }, [](caf::error&) {});
      return out;
    };
    msg::plan_row row;
    row.seq = 7;
    row.tokens = {1, 2, 3};
    row.new_blocks = {99};  // outside the 8-block cache
    row.sample = true;
    row.sampling.temperature = 0;
    row.carries_sampling = true;
    auto bad = run({1, {row}});
    CHECK(bad.error == msg::error_code::engine_failure);
    CHECK_THAT(bad.message, Catch::Contains("out of range"));

    row.new_blocks = {0};  // keep_blocks 0: replaces the table
    auto good = run({2, {row}});
    CHECK(good.error == msg::error_code::none);
    REQUIRE(good.rows.size() == 1);
    CHECK(good.rows[0].seq == 7);
    CHECK(good.rows[0].tokens.size() == 1);

    // Parameters are sent once: a later row of the sequence that carries none samples with the
    // kept ones (no logprobs), not with whatever its own `sampling` holds.
    msg::plan_row next;
    next.seq = 7;
    next.tokens = {good.rows[0].tokens[0]};
    next.start_pos = 3;
    next.keep_blocks = 1;
    next.sample = true;
    next.sampling.logprobs = 5;  // ignored: it carries nothing
    auto kept = run({3, {next}});
    REQUIRE(kept.error == msg::error_code::none);
    REQUIRE(kept.rows.size() == 1);
    CHECK(kept.rows[0].tokens.size() == 1);
    CHECK(kept.rows[0].logprobs.empty());
    // A sequence whose parameters never came fails the step, clearly.
    msg::plan_row stranger = next;
    stranger.seq = 8;
    stranger.keep_blocks = 0;
    stranger.new_blocks = {1};
    stranger.start_pos = 0;
    auto refused = run({4, {stranger}});
    CHECK(refused.error == msg::error_code::engine_failure);
    CHECK_THAT(refused.message, Catch::Contains("sampling parameters"));
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }
}

}  // namespace courier_test_actors_engine_engine_actor
