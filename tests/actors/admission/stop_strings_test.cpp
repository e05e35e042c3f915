#include <catch2/catch.hpp>

#include <random>

#include "actors/admission/stop_strings.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_stop_strings {

using courier::admission::stop_matcher;

namespace {

// Feeds `text` in pieces cut at `cuts` and returns what was released, with flush at the end
// when nothing matched.
std::string feed(stop_matcher& m, const std::string& text, const std::vector<std::size_t>& cuts) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t c : cuts) {
    out += m.push(text.substr(at, c - at));
    at = c;
  }
  out += m.push(text.substr(at));
  if (!m.matched()) out += m.flush();
  return out;
}

}  // namespace

TEST_CASE("stop strings: the output ends before the first stop string, whatever the pieces",
          "[admission]") {
  const std::string text = "Hello world. STOP here and END there";
  // Independent reference: the text up to the earliest occurrence of any stop string.
  const std::string want = "Hello world. ";
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < text.size(); ++i)
      if (rng() % 3 == 0) cuts.push_back(i);
    stop_matcher m({"END", "STOP"});
    CHECK(feed(m, text, cuts) == want);
    CHECK(m.matched());
    CHECK(m.matched_stop() == "STOP");
  }
}

TEST_CASE("stop strings: without a match everything comes out, and no piece splits a character",
          "[admission]") {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC and more text \xF0\x9F\x98\x80!";
  stop_matcher m({"xyzzy"});
  std::string out;
  for (char c : text) {
    std::string piece = m.push(std::string(1, c));
    if (!piece.empty()) CHECK((static_cast<unsigned char>(piece.back()) & 0xC0) != 0xC0);
    out += piece;
  }
  out += m.flush();
  CHECK(out == text);
  CHECK_FALSE(m.matched());
}

TEST_CASE("stop strings: a stop string spanning pieces is held back and removed", "[admission]") {
  stop_matcher m({"</end>"});
  CHECK(m.push("abc</e") == "a");  // "bc</e" could still begin "</end>": held back
  std::string rest = m.push("nd>tail");
  CHECK(m.matched());
  CHECK(rest.find("</") == std::string::npos);
  CHECK(m.push("more").empty());
}

TEST_CASE("stop strings: no stop strings releases text at once", "[admission]") {
  stop_matcher m({});
  CHECK(m.push("abc") == "abc");
  CHECK(m.flush().empty());
}

// vLLM's min_tokens: no stop string may end in the text of the first min_tokens tokens (its
// detokenizer checks stop strings only once the output is longer); one that begins there and
// ends later does stop it, as one wholly later does.
TEST_CASE("stop strings: none ends in text fed before min_tokens; one ending after it stops",
          "[admission]") {
  SECTION("wholly inside the early text: passed through") {
    stop_matcher m({"STOP"});
    std::string out = m.push("a STOP b", false);
    out += m.push(" c", true);
    CHECK_FALSE(m.matched());
    out += m.flush();
    CHECK(out == "a STOP b c");
  }
  SECTION("begun early, ended later: stops before it") {
    stop_matcher m({"STOP"});
    std::string out = m.push("a ST", false);
    out += m.push("OP b", true);
    CHECK(m.matched());
    CHECK(out == "a ");
  }
  SECTION("an early one, then a later one: the later one stops") {
    stop_matcher m({"STOP", "END"});
    std::string out = m.push("STOP x ", false);
    out += m.push("y END z STOP", true);
    CHECK(m.matched());
    CHECK(m.matched_stop() == "END");
    CHECK(out == "STOP x y ");
  }
  SECTION("a shorter stop inside the held tail is not taken back later") {
    stop_matcher m({"LONGSTOP", "ab"});
    std::string out = m.push("xxab", false);  // "ab" stays held (a LONGSTOP may begin there)
    out += m.push("c", true);
    out += m.push(" ab", true);
    CHECK(m.matched());
    CHECK(out == "xxabc ");
  }
}

}  // namespace courier_test_actors_admission_stop_strings
