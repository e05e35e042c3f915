// Every reference case, both tokenizers, encode and decode: the ids and texts come from
// @huggingface/tokenizers (tests/data/FIXTURES.md), never from courier.
#include <catch2/catch.hpp>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_fixture {

using courier::test::llama3_tokenizer;
using courier::test::qwen3_tokenizer;
using courier::test::tokenizer_cases;

namespace {

// Checks every case and reports the first few mismatches in full rather than stopping at one.
void check_all(const courier::text::tokenizer& tok, bool llama) {
  const auto& cases = tokenizer_cases();
  REQUIRE(cases.size() == 300);
  int failures = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto& want_ids = llama ? c.llama3 : c.qwen3;
    const auto& want_text = llama ? c.llama3_decoded : c.qwen3_decoded;
    const auto ids = tok.encode(c.text);
    const std::string text = tok.decode(want_ids);
    if ((ids != want_ids || text != want_text) && ++failures <= 5) {
      INFO("case " << i << ": " << c.text);
      CHECK(ids == want_ids);
      CHECK(text == want_text);
    }
  }
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("qwen3 tokenizer: encodes and decodes every reference case exactly", "[text]") {
  check_all(qwen3_tokenizer(), false);
}

TEST_CASE("llama3 tokenizer: encodes and decodes every reference case exactly", "[text]") {
  check_all(llama3_tokenizer(), true);
}

}  // namespace courier_test_text_tokenizer_tokenizer_fixture
