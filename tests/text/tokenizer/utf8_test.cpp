#include "text/tokenizer/utf8.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_utf8 {

namespace utf8 = courier::text::utf8;
using courier::test::valid_utf8;

namespace {
const std::string fffd = "\xEF\xBF\xBD";
}

TEST_CASE("utf8: repair replaces each maximal invalid subpart with one U+FFFD", "[text]") {
  // The Unicode Standard's own example (chapter 3, "U+FFFD Substitution of Maximal Subparts").
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  CHECK(utf8::repaired(in) == "a" + fffd + fffd + fffd + "b" + fffd + "c" + fffd + fffd + "d");
  CHECK(utf8::repaired("\xC0\xAF") == fffd + fffd);             // overlong lead never starts one
  CHECK(utf8::repaired("\xED\xA0\x80") == fffd + fffd + fffd);  // a surrogate: three parts
  CHECK(utf8::repaired("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // past U+10FFFF
  CHECK(utf8::repaired("\xE4\xBD") == fffd);  // truncated at the end: one part
  CHECK(utf8::repaired("ok \xE4\xBD\xA0") == "ok \xE4\xBD\xA0");
}

TEST_CASE("utf8: a non-final chunk holds back only an unfinished sequence at its end", "[text]") {
  std::string out;
  CHECK(utf8::append_repaired(out, "ab\xF0\x9F\x98", false) == 3);
  CHECK(out == "ab");
  out.clear();
  CHECK(utf8::append_repaired(out,
                              "ab\xF0\x9F"
                              "x",
                              false) == 0);  // broken, not unfinished
  CHECK(out == "ab" + fffd + "x");
  out.clear();
  CHECK(utf8::append_repaired(out, "\x80", false) == 0);  // can never be completed
  CHECK(out == fffd);
}

TEST_CASE("utf8: is_valid and repair agree with an independent validator on random bytes",
          "[text]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(0, 24), byte(0, 255), pick(0, 3);
  const std::string pieces[] = {"\xE4\xBD\xA0", "\xF0\x9F\x98\x80", "\xC3\xA9", "a"};
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    for (int i = len(rng); i > 0; --i) {
      if (pick(rng) == 0) {
        s.push_back(static_cast<char>(byte(rng)));
      } else {
        s += pieces[pick(rng)];
      }
    }
    INFO("iteration " << iter);
    REQUIRE(utf8::is_valid(s) == valid_utf8(s));
    const std::string r = utf8::repaired(s);
    REQUIRE(valid_utf8(r));
    if (valid_utf8(s)) REQUIRE(r == s);
  }
}

TEST_CASE("utf8: decode and append round-trip every scalar value", "[text]") {
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    utf8::append(s, cp);
    std::size_t i = 0;
    REQUIRE(utf8::decode(s, i) == cp);
    REQUIRE(i == s.size());
    REQUIRE(i == utf8::sequence_length(static_cast<unsigned char>(s[0])));
  }
}

}  // namespace courier_test_text_tokenizer_utf8
