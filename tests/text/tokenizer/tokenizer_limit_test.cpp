// encode_at_most: exactly encode()'s ids when they are at most the limit, nullopt when they are
// more. The reference ids come from @huggingface/tokenizers (tests/data/FIXTURES.md); the
// pathological texts are checked against encode(), which the fixture test holds to them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"
#include "tests/text/tokenizer/toy_tokenizer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_limit {

using courier::test::llama3_tokenizer;
using courier::test::qwen3_tokenizer;
using courier::test::tokenizer_cases;
using courier::test::toy_tokenizer;
using courier::test::toy_tokenizer_json;
using nlohmann::json;
using courier::text::token_id;
using courier::text::tokenizer;

namespace {

// Checks the limit at the exact count and one below it; returns false on a mismatch.
bool limit_holds(const tokenizer& tok, const std::string& text,
                 const std::vector<token_id>& want, bool add_special_tokens = true) {
  const std::optional<std::vector<token_id>> at = tok.encode_at_most(text, want.size(),
                                                                     add_special_tokens);
  bool ok = at && *at == want;
  if (!want.empty()) ok = ok && !tok.encode_at_most(text, want.size() - 1, add_special_tokens);
  return ok;
}

// Texts where the bound before BPE is tight or could be wrong: runs of the longest tokens'
// bytes (Qwen has a 128-space token), runs that are one pre-tokenized word, added tokens.
std::vector<std::string> edge_texts() {
  std::vector<std::string> out;
  for (int n : {1, 127, 128, 129, 256, 257, 1000, 4096}) {
    out.push_back(std::string(static_cast<std::size_t>(n), ' '));
    out.push_back(std::string(static_cast<std::size_t>(n), 'a'));
    out.push_back("x" + std::string(static_cast<std::size_t>(n), ' ') + "y");
    out.push_back(std::string(static_cast<std::size_t>(n), '-') + "\n");
  }
  out.push_back("<|im_start|>user\nhello<|im_end|>\n<|begin_of_text|>hi");
  out.push_back("\xff\xfe invalid UTF-8 \xc3");
  out.push_back("");
  return out;
}

void check_tokenizer(const tokenizer& tok, bool llama) {
  int failures = 0;
  for (const auto& c : tokenizer_cases()) {
    if (!limit_holds(tok, c.text, llama ? c.llama3 : c.qwen3) && ++failures <= 5) {
      FAIL_CHECK("reference case: " << c.text);
    }
  }
  for (const std::string& text : edge_texts()) {
    for (bool special : {true, false}) {
      if (!limit_holds(tok, text, tok.encode(text, special), special) && ++failures <= 5) {
        FAIL_CHECK("edge text of " << text.size() << " bytes, special tokens " << special);
      }
    }
  }
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("tokenizer limit: qwen3 gives encode()'s ids up to the limit and nullopt past it",
          "[text]") {
  check_tokenizer(qwen3_tokenizer(), false);
}

TEST_CASE("tokenizer limit: llama3 gives encode()'s ids up to the limit and nullopt past it",
          "[text]") {
  check_tokenizer(llama3_tokenizer(), true);
}

TEST_CASE("tokenizer limit: a 4 MB word past the limit is nullopt, and no_limit is encode()",
          "[text]") {
  // 4 MB of one letter is one pre-tokenized word: more than 1000 ids by its length alone
  // (bench/victim-stream.sh shows what stopping before its BPE saves).
  const std::string word(4u << 20, 'a');
  CHECK_FALSE(qwen3_tokenizer().encode_at_most(word, 1000));
  CHECK_FALSE(llama3_tokenizer().encode_at_most(word, 1000));
  const std::string text = "Hello, world! \xce\xb1\xce\xb2";
  CHECK(*qwen3_tokenizer().encode_at_most(text, tokenizer::no_limit) ==
        qwen3_tokenizer().encode(text));
}

namespace {

// The longest bytes any id decodes to (an added token's are its content): what one id matches.
std::size_t longest_token(const tokenizer& tok) {
  std::size_t longest = 0;
  for (token_id id = 0; id < tok.id_bound(); ++id) {
    longest = std::max(longest, tok.token_bytes(id).size());
  }
  return longest;
}

// A text of n bytes is at least n / max_text_bytes_per_id() ids; returns the failures.
int bound_failures(const tokenizer& tok, const std::vector<std::string>& texts) {
  int failures = 0;
  const std::size_t per_id = tok.max_text_bytes_per_id();
  for (const std::string& text : texts) {
    if (tok.encode(text, false).size() < text.size() / per_id && ++failures <= 5) {
      FAIL_CHECK("text of " << text.size() << " bytes is fewer ids than the bound");
    }
  }
  return failures;
}

}  // namespace

TEST_CASE("tokenizer limit: max_text_bytes_per_id is the longest token times NFC's shrink",
          "[text]") {
  // Qwen 3 normalizes with NFC (text can shrink to a third); Llama 3 does not normalize.
  CHECK(qwen3_tokenizer().max_text_bytes_per_id() == 3 * longest_token(qwen3_tokenizer()));
  CHECK(llama3_tokenizer().max_text_bytes_per_id() == longest_token(llama3_tokenizer()));
  std::vector<std::string> texts = edge_texts();
  for (const auto& c : tokenizer_cases()) texts.push_back(c.text);
  // Hangul jamo (L V T, 9 bytes) compose under NFC into one syllable of 3 bytes.
  std::string jamo;
  for (int i = 0; i < 200; ++i) jamo += "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8";
  texts.push_back(jamo);
  texts.push_back(std::string(5000, ' '));
  CHECK(bound_failures(qwen3_tokenizer(), texts) == 0);
  CHECK(bound_failures(llama3_tokenizer(), texts) == 0);
}

TEST_CASE("tokenizer limit: no bytes-per-id bound where one id can stand for any length",
          "[text]") {
  json plain = toy_tokenizer_json();
  CHECK(toy_tokenizer(plain).max_text_bytes_per_id() == longest_token(toy_tokenizer(plain)));
  // An added token that swallows the whitespace beside it: one id for a megabyte of spaces.
  for (const char* side : {"lstrip", "rstrip"}) {
    json j = toy_tokenizer_json();
    j["added_tokens"][0][side] = true;
    const tokenizer tok = toy_tokenizer(j);
    CHECK(tok.max_text_bytes_per_id() == 0);
    const std::string spaces(1u << 20, ' ');
    const std::string text = std::string(side) == "lstrip" ? spaces + "<|end|>" : "<|end|>" + spaces;
    CHECK(tok.encode(text, false).size() == 1);
  }
  // A Split that removes its matches (here every space) before BPE.
  json removed = toy_tokenizer_json();
  removed["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array({{{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Removed"}},
                    removed["pre_tokenizer"]})}};
  const tokenizer tok = toy_tokenizer(removed);
  CHECK(tok.max_text_bytes_per_id() == 0);
  CHECK(tok.encode(std::string(4096, ' ') + "hello", false).size() == 1);
}

}  // namespace courier_test_text_tokenizer_tokenizer_limit
