// Added tokens: matched in the text before pre-tokenization, with Hugging Face's flags.
#include "text/tokenizer/added_vocabulary.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"
#include "tests/text/tokenizer/toy_tokenizer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_added_vocabulary {

using courier::test::qwen3_tokenizer;
using courier::test::toy_tokenizer;
using courier::test::toy_tokenizer_json;
using nlohmann::json;
using ids = std::vector<std::uint32_t>;

namespace {

json with_token(const std::string& content, std::uint32_t id, bool lstrip, bool rstrip,
                bool single_word, bool normalized = false) {
  json j = toy_tokenizer_json();
  j["added_tokens"].push_back({{"id", id},
                               {"content", content},
                               {"lstrip", lstrip},
                               {"rstrip", rstrip},
                               {"single_word", single_word},
                               {"normalized", normalized},
                               {"special", false}});
  return j;
}

}  // namespace

TEST_CASE("added tokens: special tokens in text are matched whole, partial ones are not",
          "[text]") {
  const auto& t = qwen3_tokenizer();
  const auto im_start = *t.token_to_id("<|im_start|>");
  const auto im_end = *t.token_to_id("<|im_end|>");
  CHECK(im_start == 151644u);
  CHECK(im_end == 151645u);
  const auto got = t.encode("<|im_start|>user\nHi<|im_end|>");
  REQUIRE(got.size() >= 3);
  CHECK(got.front() == im_start);
  CHECK(got.back() == im_end);
  CHECK(t.encode("x<|im_end|>y") == ids{t.encode("x")[0], im_end, t.encode("y")[0]});
  const auto partial = t.encode("<|im_start");
  CHECK(std::find(partial.begin(), partial.end(), im_start) == partial.end());
  // add_special_tokens only concerns the post-processor, never matching in the text.
  CHECK(t.encode("<|im_end|>", false) == ids{im_end});
  // Non-special added tokens (<think>) are matched too, and kept by skip_special_tokens.
  const auto think = t.encode("<think>x</think>");
  CHECK(think.front() == *t.token_to_id("<think>"));
  CHECK(t.decode(think, true) == "<think>x</think>");
  CHECK(t.decode(t.encode("a<|im_end|>b"), true) == "ab");
}

TEST_CASE("added tokens: the longest token at the leftmost position wins", "[text]") {
  json j = with_token("<a>", 301, false, false, false);
  j["added_tokens"].push_back({{"id", 302}, {"content", "<a><b>"}, {"normalized", false}});
  const auto t = toy_tokenizer(j);
  CHECK(t.encode("<a><b>") == ids{302});
  CHECK(t.encode("<a><a><b>") == ids{301, 302});
}

TEST_CASE("added tokens: lstrip and rstrip swallow neighbouring whitespace", "[text]") {
  const auto plain = toy_tokenizer(toy_tokenizer_json());
  auto join = [](ids a, const ids& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const auto lstrip = toy_tokenizer(with_token("<m>", 301, true, false, false));
  CHECK(lstrip.encode("hello  <m> world") == ids{259, 301, 264});
  const auto rstrip = toy_tokenizer(with_token("<m>", 301, false, true, false));
  CHECK(rstrip.encode("hello  <m> world") ==
        join(join(plain.encode("hello  "), {301}), plain.encode("world")));
  const auto both = toy_tokenizer(with_token("<m>", 301, true, true, false));
  CHECK(both.encode("hello \t<m>\n world") == join({259, 301}, plain.encode("world")));
}

TEST_CASE("added tokens: single_word only matches a token not glued to a word", "[text]") {
  const auto t = toy_tokenizer(with_token("ab", 301, false, false, true));
  CHECK(t.encode("ab") == ids{301});
  CHECK(t.encode("x ab.") == ids{'x', ' ', 301, '.'});  // byte tokens have the byte's id
  CHECK(t.encode("(ab)") == ids{'(', 301, ')'});
  for (const char* glued : {"xab", "ab_", "9ab", "ab\xC3\xA9"}) {
    const auto got = t.encode(glued);
    INFO(glued);
    CHECK(std::find(got.begin(), got.end(), 301u) == got.end());
  }
}

TEST_CASE("added tokens: normalized tokens are matched after normalization", "[text]") {
  // With NFC, a token written precomposed matches decomposed input when normalized=true.
  json j = with_token("\xC3\xA9", 301, false, false, false, true);  // é
  j["normalizer"] = {{"type", "NFC"}};
  CHECK(toy_tokenizer(j).encode("e\xCC\x81") == ids{301});
  j = with_token("e\xCC\x81", 301, false, false, false, false);  // raw, decomposed
  j["normalizer"] = {{"type", "NFC"}};
  CHECK(toy_tokenizer(j).encode("e\xCC\x81") == ids{301});  // found before NFC
  CHECK(toy_tokenizer(j).encode("\xC3\xA9") != ids{301});
}

TEST_CASE("added vocabulary: spans cover the text with tokens where they match", "[text]") {
  courier::text::added_vocabulary v({{"<x>", 7, true, false, false, false, false}},
                                    courier::text::normalizer());
  std::vector<courier::text::text_span> spans;
  v.split("a<x>b<x>", false, spans);
  REQUIRE(spans.size() == 4);
  CHECK((spans[0].begin == 0 && spans[0].end == 1 && !spans[0].id));
  CHECK((spans[1].begin == 1 && spans[1].end == 4 && spans[1].id == 7u));
  CHECK((spans[2].begin == 4 && spans[2].end == 5 && !spans[2].id));
  CHECK((spans[3].begin == 5 && spans[3].end == 8 && spans[3].id == 7u));
  spans.clear();
  v.split("", false, spans);
  CHECK(spans.empty());
  v.split("<x>", true, spans);  // no normalized tokens: one plain span
  REQUIRE(spans.size() == 1);
  CHECK(!spans[0].id);
}

}  // namespace courier_test_text_tokenizer_added_vocabulary
