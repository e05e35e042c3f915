// courier-bench's datasets: determinism, the length bounds, the shared-prefix structure, and
// text prompts through a real tokenizer.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tools/bench/dataset.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_datasets {

namespace {

using namespace courier::bench_tool;

random_spec small_random(double ratio = 0.0) {
  random_spec s;
  s.num_prompts = 200;
  s.input_len = 100;
  s.output_len = 50;
  s.range_ratio = ratio;
  return s;
}

const std::shared_ptr<const courier::text::tokenizer>& llama3() {
  static const auto tok = load_tokenizer(COURIER_TEST_DATA "/tokenizers/llama3");
  return tok;
}

bool same_prompts(const std::vector<bench_request>& a, const std::vector<bench_request>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].prompt_ids != b[i].prompt_ids || a[i].output_len != b[i].output_len) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("bench datasets: the same seed gives the same random prompts, another seed others",
          "[bench_tool]") {
  const auto ids = token_sampler::uniform(1000);
  const auto a = random_dataset(small_random(0.5), ids, prompt_format::ids, 7);
  const auto b = random_dataset(small_random(0.5), ids, prompt_format::ids, 7);
  const auto c = random_dataset(small_random(0.5), ids, prompt_format::ids, 8);
  CHECK(same_prompts(a, b));
  CHECK_FALSE(same_prompts(a, c));
  for (const bench_request& r : a) {
    for (const token_id id : r.prompt_ids) REQUIRE(id < 1000);
  }
}

TEST_CASE("bench datasets: random lengths stay within the range-ratio bounds", "[bench_tool]") {
  // input 100 * (1 -/+ 0.25) -> [75, 125]; output floor(37.5) = 37 .. floor(62.5) = 62.
  const auto reqs =
      random_dataset(small_random(0.25), token_sampler::uniform(500), prompt_format::ids, 1);
  REQUIRE(reqs.size() == 200);
  std::int64_t lo = 1000, hi = 0;
  for (const bench_request& r : reqs) {
    CHECK(r.input_len >= 75);
    CHECK(r.input_len <= 125);
    CHECK(r.output_len >= 37);
    CHECK(r.output_len <= 62);
    CHECK(static_cast<std::int64_t>(r.prompt_ids.size()) == r.input_len);
    lo = std::min(lo, r.input_len);
    hi = std::max(hi, r.input_len);
  }
  // Uniform over 51 values: 200 draws reach close to both ends.
  CHECK(lo < 80);
  CHECK(hi > 120);
}

TEST_CASE("bench datasets: ratio 0 gives exactly the set lengths and the prefix is shared",
          "[bench_tool]") {
  random_spec spec = small_random();
  spec.prefix_len = 10;
  const auto reqs = random_dataset(spec, token_sampler::uniform(50000), prompt_format::ids, 3);
  const std::vector<token_id> prefix(reqs[0].prompt_ids.begin(), reqs[0].prompt_ids.begin() + 10);
  std::set<std::vector<token_id>> suffixes;
  for (const bench_request& r : reqs) {
    CHECK(r.input_len == 110);
    CHECK(r.output_len == 50);
    CHECK(r.group == -1);
    CHECK(std::equal(prefix.begin(), prefix.end(), r.prompt_ids.begin()));
    suffixes.insert({r.prompt_ids.begin() + 10, r.prompt_ids.end()});
  }
  CHECK(suffixes.size() == reqs.size());
}

TEST_CASE("bench datasets: shared-prefix groups share exactly the system prompt", "[bench_tool]") {
  shared_prefix_spec spec{4, 5, 32, 8, 16};
  const auto reqs =
      shared_prefix_dataset(spec, token_sampler::uniform(50000), prompt_format::ids, 9);
  REQUIRE(reqs.size() == 20);
  std::map<std::int64_t, std::vector<const bench_request*>> groups;
  for (const bench_request& r : reqs) {
    CHECK(r.input_len == 32 + 8);
    CHECK(static_cast<std::int64_t>(r.prompt_ids.size()) == 40);
    CHECK(r.output_len == 16);
    groups[r.group].push_back(&r);
  }
  REQUIRE(groups.size() == 4);
  std::set<std::vector<token_id>> system_prompts;
  for (const auto& [g, members] : groups) {
    REQUIRE(members.size() == 5);
    const auto& first = members[0]->prompt_ids;
    system_prompts.insert({first.begin(), first.begin() + 32});
    for (std::size_t i = 1; i < members.size(); ++i) {
      const auto& ids = members[i]->prompt_ids;
      CHECK(std::equal(first.begin(), first.begin() + 32, ids.begin()));
      // The questions differ from the first prompt's: the shared part is exactly 32 ids
      // (50000 ids make an equal 8-id question practically impossible).
      CHECK_FALSE(std::equal(first.begin() + 32, first.end(), ids.begin() + 32));
    }
  }
  CHECK(system_prompts.size() == 4);
  // The order is shuffled: the groups interleave instead of coming in four runs of five.
  bool interleaved = false;
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    if (reqs[i].group < reqs[i - 1].group) interleaved = true;
  }
  CHECK(interleaved);
  CHECK(same_prompts(
      reqs, shared_prefix_dataset(spec, token_sampler::uniform(50000), prompt_format::ids, 9)));
}

TEST_CASE("bench datasets: text prompts decode through the llama3 tokenizer without specials",
          "[bench_tool]") {
  const auto sampler = token_sampler::from_tokenizer(llama3());
  // Llama 3: 128000 ordinary ids, then 256 special ones (<|begin_of_text|>, reserved, ...).
  CHECK(sampler.num_choices() == 128000);
  random_spec spec = small_random();
  spec.num_prompts = 20;
  const auto reqs = random_dataset(spec, sampler, prompt_format::text, 5);
  for (const bench_request& r : reqs) {
    REQUIRE_FALSE(r.prompt_text.empty());
    for (const token_id id : r.prompt_ids) REQUIRE(id < 128000);
    CHECK(r.prompt_text == llama3()->decode(r.prompt_ids));
    const auto again = llama3()->encode(r.prompt_text, false);
    // Re-tokenising random ids' text merges and splits some tokens, but stays close.
    CHECK(again.size() >= 50);
    CHECK(again.size() <= 200);
    CHECK(llama3()->decode(again) == r.prompt_text);
  }
}

TEST_CASE("bench datasets: shared-prefix text prompts of a group start with the same text",
          "[bench_tool]") {
  const auto sampler = token_sampler::from_tokenizer(llama3());
  const auto reqs = shared_prefix_dataset({3, 4, 24, 6, 8}, sampler, prompt_format::text, 2);
  REQUIRE(reqs.size() == 12);
  std::map<std::int64_t, std::string> system_text;
  for (const bench_request& r : reqs) {
    const std::vector<token_id> system(r.prompt_ids.begin(), r.prompt_ids.begin() + 24);
    const std::string expected = llama3()->decode(system) + "\n\n";
    CHECK(r.prompt_text.compare(0, expected.size(), expected) == 0);
    CHECK(r.prompt_text.size() > expected.size());
    system_text[r.group] = expected;
  }
  CHECK(system_text.size() == 3);
}

TEST_CASE("bench datasets: a model folder without tokenizer.json draws ids below its vocab size",
          "[bench_tool]") {
  const std::string folder = COURIER_TEST_DATA "/models/tiny-llama3";  // vocab_size 2048
  CHECK(sampler_for(folder, std::nullopt, false).num_choices() == 2048);
  CHECK(sampler_for(folder, 100, false).num_choices() == 100);
  CHECK_THROWS_WITH(sampler_for(folder, std::nullopt, true), Catch::Contains("tokenizer.json"));
  CHECK(sampler_for(COURIER_TEST_DATA "/tokenizers/llama3", std::nullopt, true).has_tokenizer());
  CHECK(sampler_for("", 10, false).num_choices() == 10);
  CHECK_THROWS(sampler_for("", std::nullopt, false));
}

TEST_CASE("bench datasets: multi-turn lists every first turn, then each later turn after the "
          "turn before it, the system prompt only in the first",
          "[bench_tool]") {
  const token_sampler ids = sampler_for("", 5000, false);
  multi_turn_spec spec;
  spec.num_conversations = 5;
  spec.turns = 3;
  spec.system_prompt_len = 20;
  spec.message_len = 7;
  spec.output_len = 9;
  const auto reqs = multi_turn_dataset(spec, ids, 3);
  REQUIRE(reqs.size() == 15);
  std::set<std::int64_t> firsts;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const bench_request& r = reqs[i];
    INFO("request " << i);
    CHECK(r.output_len == 9);
    if (i < 5) {
      CHECK(r.turn == 0);
      CHECK(r.follows == -1);
      CHECK(r.prompt_ids.size() == 27);  // system prompt + message
      firsts.insert(r.group);
    } else {
      REQUIRE(r.follows >= 0);
      REQUIRE(static_cast<std::size_t>(r.follows) < i);
      const bench_request& before = reqs[static_cast<std::size_t>(r.follows)];
      CHECK(before.group == r.group);
      CHECK(before.turn + 1 == r.turn);
      CHECK(r.prompt_ids.size() == 7);  // its own message; the rest comes from the turn before
    }
  }
  CHECK(firsts.size() == 5);
  CHECK(same_prompts(reqs, multi_turn_dataset(spec, ids, 3)));
  CHECK_FALSE(same_prompts(reqs, multi_turn_dataset(spec, ids, 4)));
}

}  // namespace courier_test_tools_bench_datasets
