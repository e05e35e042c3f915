#include "text/tokenizer/cleanup.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_cleanup {

using courier::text::clean_up_tokenization;
using courier::text::cleanup_safe_split;

namespace {

// transformers' clean_up_tokenization written out independently: Python's str.replace chain.
std::string reference_cleanup(std::string s) {
  const char* rules[][2] = {{" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
                            {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
                            {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& r : rules) {
    const std::string from = r[0], to = r[1];
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
      if (s.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size();
      } else {
        out += s[i++];
      }
    }
    s = out;
  }
  return s;
}

}  // namespace

TEST_CASE("cleanup: removes the spaces transformers removes", "[text]") {
  CHECK(clean_up_tokenization("Hello , world !") == "Hello, world!");
  CHECK(clean_up_tokenization("I do n't know . You 're right ?") == "I don't know. You're right?");
  CHECK(clean_up_tokenization("x ' y") == "x'y");
  CHECK(clean_up_tokenization("a  ' s") == "a's");  // " ' " first, then " 's"
  CHECK(clean_up_tokenization("") == "");
}

TEST_CASE("cleanup: text split at a safe point cleans up the same in two halves", "[text]") {
  std::mt19937 rng(11);
  const std::string alphabet = "   .?!,'ntsmvrex";
  std::uniform_int_distribution<std::size_t> len(0, 40), ch(0, alphabet.size() - 1);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    for (std::size_t i = len(rng); i > 0; --i) s += alphabet[ch(rng)];
    INFO("text '" << s << "'");
    REQUIRE(clean_up_tokenization(s) == reference_cleanup(s));
    const std::size_t cut = cleanup_safe_split(s);
    REQUIRE(cut <= s.size());
    if (cut > 0) REQUIRE(s.substr(cut - 3, 3).find(' ') == std::string::npos);
    REQUIRE(reference_cleanup(s.substr(0, cut)) + reference_cleanup(s.substr(cut)) ==
            reference_cleanup(s));
  }
}

}  // namespace courier_test_text_tokenizer_cleanup
