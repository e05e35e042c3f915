#include "text/tokenizer/pre_tokenizer.hpp"

#include "text/tokenizer/tokenizer_error.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_pre_tokenizer {

using courier::text::pre_tokenizer;
using courier::text::regex;
using courier::text::split_behavior;

namespace {

std::vector<std::string> split(const pre_tokenizer& p, std::string_view text) {
  courier::text::pre_tokenizer_scratch scratch;
  const auto& views = p.split(text, scratch);
  return {views.begin(), views.end()};
}

pre_tokenizer literal_split(const char* pattern, split_behavior b, bool invert = false) {
  pre_tokenizer p;
  p.add_split({regex(pattern, true), b, invert});
  return p;
}

using strings = std::vector<std::string>;

}  // namespace

TEST_CASE("pre-tokenizer: Split behaviours follow Hugging Face's documented example", "[text]") {
  // The example of NormalizedString::split in Hugging Face tokenizers (empty pieces dropped).
  const char* text = "the-final--countdown";
  CHECK(split(literal_split("-", split_behavior::removed), text) ==
        strings{"the", "final", "countdown"});
  CHECK(split(literal_split("-", split_behavior::isolated), text) ==
        strings{"the", "-", "final", "-", "-", "countdown"});
  CHECK(split(literal_split("-", split_behavior::merged_with_previous), text) ==
        strings{"the-", "final-", "-", "countdown"});
  CHECK(split(literal_split("-", split_behavior::merged_with_next), text) ==
        strings{"the", "-final", "-", "-countdown"});
  CHECK(split(literal_split("-", split_behavior::contiguous), text) ==
        strings{"the", "-", "final", "--", "countdown"});
}

TEST_CASE("pre-tokenizer: invert swaps matches and gaps, so Removed keeps the matches", "[text]") {
  pre_tokenizer p;
  p.add_split({regex("[a-z]+", false), split_behavior::removed, true});
  CHECK(split(p, "ab12cd3") == strings{"ab", "cd"});
}

TEST_CASE("pre-tokenizer: ByteLevel adds a prefix space and splits with GPT-2's pattern",
          "[text]") {
  pre_tokenizer p;
  p.add_byte_level({true, true});
  CHECK(p.byte_level());
  CHECK(split(p, "Hello world's  end") == strings{" Hello", " world", "'s", " ", " end"});
  CHECK(split(p, " x") == strings{" x"});  // already starts with a space
  CHECK(split(p, "").empty());
}

TEST_CASE("pre-tokenizer: a regex Split handles case-insensitive groups and lookahead", "[text]") {
  pre_tokenizer p;
  p.add_split(
      {regex(R"((?i:'s|'ll)|\p{L}+|\s+(?!\S)|\s+)", false), split_behavior::isolated, false});
  CHECK(split(p, "IT'S  we'LL") == strings{"IT", "'S", " ", " ", "we", "'LL"});
}

TEST_CASE("pre-tokenizer: an invalid regex is an error naming the offset", "[text]") {
  try {
    regex r("(unclosed", false);
    FAIL("no error");
  } catch (const courier::text::tokenizer_error& e) {
    CHECK(std::string(e.what()).find("invalid regex at offset") != std::string::npos);
  }
}

}  // namespace courier_test_text_tokenizer_pre_tokenizer
