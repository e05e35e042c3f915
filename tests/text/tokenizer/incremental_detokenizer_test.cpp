// The streaming detokenizer against decode(): same text, never a broken character.
#include "text/tokenizer/incremental_detokenizer.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"
#include "tests/text/tokenizer/toy_tokenizer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_incremental_detokenizer {

using courier::test::llama3_tokenizer;
using courier::test::qwen3_tokenizer;
using courier::test::tokenizer_cases;
using courier::test::valid_utf8;
using courier::text::incremental_detokenizer;
using courier::text::token_id;
using courier::text::tokenizer;

namespace {

// Streams `ids` one at a time; checks every piece and returns the concatenation.
std::string stream(const tokenizer& t, const std::vector<token_id>& ids, bool skip_special) {
  incremental_detokenizer d(t, skip_special);
  std::string all;
  for (token_id id : ids) {
    const std::string piece = d.push(id);
    INFO("piece after id " << id);
    REQUIRE(valid_utf8(piece));
    all += piece;
  }
  const std::string rest = d.flush();
  REQUIRE(valid_utf8(rest));
  return all + rest;
}

void check_cases(const tokenizer& t, bool llama) {
  for (const auto& c : tokenizer_cases()) {
    const auto& ids = llama ? c.llama3 : c.qwen3;
    INFO("text: " << c.text);
    for (bool skip : {false, true}) REQUIRE(stream(t, ids, skip) == t.decode(ids, skip));
  }
}

// Ids drawn so that streams often hold partial characters, special tokens and unknown ids.
std::vector<token_id> random_ids(std::mt19937& rng, const tokenizer& t, std::size_t n) {
  std::uniform_int_distribution<token_id> any(0, t.id_bound() + 5);
  std::uniform_int_distribution<token_id> low(0, 400);  // single bytes and short tokens
  std::uniform_int_distribution<int> kind(0, 3);
  std::vector<token_id> ids;
  for (std::size_t i = 0; i < n; ++i) ids.push_back(kind(rng) == 0 ? any(rng) : low(rng));
  return ids;
}

}  // namespace

TEST_CASE("incremental detokenizer: equals decode() on every qwen3 reference case", "[text]") {
  check_cases(qwen3_tokenizer(), false);
}

TEST_CASE(
    "incremental detokenizer: equals decode() on every llama3 reference case, with its "
    "space clean-up",
    "[text]") {
  REQUIRE(llama3_tokenizer().cleans_up_spaces());
  check_cases(llama3_tokenizer(), true);
}

TEST_CASE("incremental detokenizer: equals decode() on random id streams", "[text]") {
  std::mt19937 rng(2024);
  for (const tokenizer* t : {&qwen3_tokenizer(), &llama3_tokenizer()}) {
    for (int iter = 0; iter < 300; ++iter) {
      const auto ids = random_ids(rng, *t, 1 + iter % 60);
      INFO("iteration " << iter);
      for (bool skip : {false, true}) {
        const std::string want = t->decode(ids, skip);
        REQUIRE(valid_utf8(want));
        REQUIRE(stream(*t, ids, skip) == want);
      }
    }
  }
}

TEST_CASE("incremental detokenizer: holds a split character until it is complete", "[text]") {
  // "你" is E4 BD A0: three byte tokens in a byte-level vocabulary.
  const auto& t = qwen3_tokenizer();
  const auto ids = t.encode("\xE4\xBD\xA0\xE5\xA5\xBD");
  incremental_detokenizer d(t);
  std::string all;
  for (const char* bytes : {"\xE4", "\xBD", "\xA0"}) {
    const auto id = t.token_to_id(courier::text::byte_level::from_bytes(bytes));
    REQUIRE(id);
    all += d.push(*id);
    if (std::string(bytes) != "\xA0") CHECK(all.empty());
  }
  CHECK(all == "\xE4\xBD\xA0");
  for (auto id : ids) all += d.push(id);
  all += d.flush();
  CHECK(all == "\xE4\xBD\xA0\xE4\xBD\xA0\xE5\xA5\xBD");
}

TEST_CASE("incremental detokenizer: an unfinished character at the end becomes U+FFFD", "[text]") {
  const auto& t = qwen3_tokenizer();
  incremental_detokenizer d(t);
  const auto id = t.token_to_id(courier::text::byte_level::from_bytes("\xF0"));
  REQUIRE(id);
  CHECK(d.push(*t.token_to_id("hi")) == "hi");
  CHECK(d.push(*id).empty());
  CHECK(d.flush() == "\xEF\xBF\xBD");
  CHECK(d.push(*t.token_to_id("hi")) == "hi");  // flush started a new stream
}

TEST_CASE("incremental detokenizer: with clean-up it holds text until clean-up cannot change it",
          "[text]") {
  const tokenizer t = courier::test::toy_tokenizer(courier::test::toy_tokenizer_json(),
                                                   R"({"clean_up_tokenization_spaces": true})");
  incremental_detokenizer d(t);
  std::string all;
  const auto ids = t.encode("hello , world ! I do n't");
  for (auto id : ids) all += d.push(id);
  all += d.flush();
  CHECK(all == "hello, world! I don't");
  CHECK(all == t.decode(ids));
}

}  // namespace courier_test_text_tokenizer_incremental_detokenizer
