// Grammar masks on the real vocabularies (Qwen 3: 151,936 ids; Llama 3: 128,256), checked
// against the brute-force reference on states along random generations of a JSON grammar.
#include "actors/admission/grammar_vocabulary.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "grammar/token_mask.hpp"
#include "tests/text/tokenizer/tokenizer_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_grammar_vocabulary {

using namespace courier;
using namespace courier::grammar;

namespace {

// tests/data/grammars/json.gbnf: any JSON object, by hand.
std::string json_gbnf() {
  std::ifstream in(test::tokenizer_data_dir() + "/grammars/json.gbnf");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares masks on `steps` states of a random generation; prefers tokens that close
// brackets now and then so the walk does not stay in one string.
void compare_on_walk(const text::tokenizer& tok, text::token_id eos, int steps) {
  const auto vocab = admission::grammar_vocabulary(tok, {eos});
  const auto g = compile_gbnf(json_gbnf());
  mask_cache cache(g, vocab);
  matcher m(g);
  std::mt19937 rng(99);
  int mismatches = 0;
  for (int s = 0; s < steps; ++s) {
    token_bitmask fast, slow;
    fill_token_mask(m, cache, fast);
    fill_token_mask_reference(m, *vocab, slow);
    if (fast != slow && ++mismatches <= 3) FAIL_CHECK("masks differ at step " << s);
    for (text::token_id id = 0; id < tok.id_bound(); ++id) {
      if (tok.is_special(id) && id != eos && mask_has(fast, id)) FAIL("special token allowed");
    }
    std::vector<std::uint32_t> allowed;
    for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
      if (mask_has(slow, id)) allowed.push_back(id);
    }
    REQUIRE_FALSE(allowed.empty());
    std::uint32_t pick = allowed[rng() % allowed.size()];
    if (rng() % 3 == 0) {  // favour structure: a token with a quote or bracket, if allowed
      for (std::uint32_t id : allowed) {
        const std::string& b = vocab->bytes(id);
        if (b.find_first_of("\"{}[],:") != std::string::npos && rng() % 8 == 0) {
          pick = id;
          break;
        }
      }
    }
    if (pick == eos) break;
    REQUIRE(m.accept(vocab->bytes(pick)));
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("grammar vocabulary: Qwen 3 masks agree with brute force along a JSON generation",
          "[admission][grammar]") {
  const auto& tok = test::qwen3_tokenizer();
  compare_on_walk(tok, *tok.token_to_id("<|im_end|>"), 10);
}

TEST_CASE("grammar vocabulary: Llama 3 masks agree with brute force along a JSON generation",
          "[admission][grammar]") {
  const auto& tok = test::llama3_tokenizer();
  compare_on_walk(tok, *tok.token_to_id("<|eot_id|>"), 10);
}

TEST_CASE("grammar vocabulary: special tokens are out, end of sequence only when complete",
          "[admission][grammar]") {
  const auto& tok = test::qwen3_tokenizer();
  const text::token_id eos = *tok.token_to_id("<|im_end|>");
  const auto vocab = admission::grammar_vocabulary(tok, {eos});
  const auto g = compile_gbnf(R"g(root ::= "{}")g");
  mask_cache cache(g, vocab);
  matcher m(g);
  token_bitmask mask;
  fill_token_mask(m, cache, mask);
  CHECK(mask_has(mask, *tok.token_to_id("{}")));
  CHECK(mask_has(mask, *tok.token_to_id("{")));
  CHECK_FALSE(mask_has(mask, eos));
  CHECK_FALSE(mask_has(mask, *tok.token_to_id("<|im_start|>")));
  REQUIRE(m.accept("{}"));
  fill_token_mask(m, cache, mask);
  std::vector<std::uint32_t> allowed;
  for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
    if (mask_has(mask, id)) allowed.push_back(id);
  }
  CHECK(allowed == std::vector<std::uint32_t>{eos});
}

}  // namespace courier_test_actors_admission_grammar_vocabulary
