// Draft verification in the engine: a row with drafts yields exactly the tokens a one-token-per-
// step decode would, up to and including the first position where a draft differs.
#include <catch2/catch.hpp>

#include "actors/engine/engine_actor.hpp"
#include "gpu/model/generate_one.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_verify {

using namespace courier;

namespace {

struct verifier {
  test::sim_model sm{"tiny-llama3"};
  std::vector<msg::token_id> prompt = {5, 77, 300, 12, 9, 1024, 33, 8};

  std::vector<msg::token_id> decode_alone(const msg::sampling_params& sp, int n) {
    model::kv_cache cache(*sm.dev, sm.model->config(), 8, 16);
    model::generate_request g;
    g.prompt = prompt;
    g.max_tokens = n;
    g.ignore_eos = true;
    g.sampling.temperature = sp.temperature;
    g.sampling.top_k = sp.top_k;
    g.sampling.seed = sp.seed;
    return model::generate_one(*sm.model, cache, g).tokens;
  }

  // Prefills the prompt (sampling token 0), then verifies [token 0, drafts...] in one row.
  std::vector<msg::token_id> verify(const msg::sampling_params& sp,
                                    const std::vector<msg::token_id>& drafts) {
    model::kv_cache cache(*sm.dev, sm.model->config(), 8, 16);
    // The model's slots, as the engine has them (reserve makes 2 * max_seqs).
    sm.model->reserve_slots(2, 8 * 16, 16);
    actors::sequence_table seqs(sm.model->token_slots());
    auto run = [&](const msg::step_plan& p) {
      REQUIRE_FALSE(seqs.apply(p));
      const std::vector<actors::row_use> uses = seqs.resolve(p);
      return actors::to_step_result(
          p, uses, sm.model->forward(actors::to_forward_batch(p, seqs, uses), cache));
    };
    msg::sequence_start start;
    start.seq = 1;
    start.sampling = sp;
    start.carries_sampling = true;
    msg::plan_row pre;
    pre.seq = 1;
    pre.tokens = prompt;
    pre.new_blocks = {0, 1};
    pre.sample = true;
    const auto r1 = run(msg::step_plan{1, {pre}, {start}});
    msg::plan_row row = pre;
    row.tokens = {r1.rows.at(0).tokens.at(0)};
    row.tokens.insert(row.tokens.end(), drafts.begin(), drafts.end());
    row.start_pos = static_cast<std::int32_t>(prompt.size());
    row.decode = true;
    row.num_drafts = static_cast<std::int32_t>(drafts.size());
    row.draw_index = 1;
    row.keep_blocks = 2;  // the table stands: no new block
    row.new_blocks.clear();
    const msg::step_plan p2{2, {row}};
    {  // the forward row borrows the engine's copy of the table: no copy per step
      actors::sequence_table probe(2);
      REQUIRE_FALSE(probe.apply(msg::step_plan{1, {pre}, {start}}));
      probe.resolve(msg::step_plan{1, {pre}, {start}});
      REQUIRE_FALSE(probe.apply(p2));
      const model::forward_batch fb = actors::to_forward_batch(p2, probe, probe.resolve(p2));
      REQUIRE(fb.rows.size() == 1);
      CHECK(fb.rows[0].table_ref == &probe.find(1)->table);
      CHECK(fb.rows[0].block_table.empty());
      CHECK(fb.rows[0].table() == std::vector<std::int32_t>{0, 1});
    }
    auto out = run(p2);
    std::vector<msg::token_id> tokens = {r1.rows.at(0).tokens.at(0)};
    tokens.insert(tokens.end(), out.rows.at(0).tokens.begin(), out.rows.at(0).tokens.end());
    return tokens;
  }
};

}  // namespace

TEST_CASE("engine verify: right drafts are all accepted, plus the token after them",
          "[engine]") {
  verifier v;
  for (float temperature : {0.0f, 0.9f}) {
    INFO("temperature " << temperature);
    msg::sampling_params sp;
    sp.temperature = temperature;
    sp.top_k = 50;
    sp.seed = 1234;
    sp.has_seed = true;
    const auto want = v.decode_alone(sp, 6);
    const std::vector<msg::token_id> drafts(want.begin() + 1, want.begin() + 5);
    CHECK(v.verify(sp, drafts) == want);  // token 0, four drafts, and token 5
  }
}

TEST_CASE("engine verify: a wrong draft ends the row with the token decoding would give there",
          "[engine]") {
  verifier v;
  for (float temperature : {0.0f, 0.9f}) {
    INFO("temperature " << temperature);
    msg::sampling_params sp;
    sp.temperature = temperature;
    sp.top_k = 50;
    sp.seed = 99;
    sp.has_seed = true;
    const auto want = v.decode_alone(sp, 6);
    std::vector<msg::token_id> drafts(want.begin() + 1, want.begin() + 5);
    drafts[2] = want[3] == 7 ? 8 : 7;  // the third draft is wrong
    CHECK(v.verify(sp, drafts) == std::vector<msg::token_id>(want.begin(), want.begin() + 4));
  }
}

}  // namespace courier_test_actors_engine_verify
