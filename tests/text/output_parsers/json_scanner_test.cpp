// The incremental JSON checker and string decoder the tool-call parser is built on.
#include <catch2/catch.hpp>

#include <string>

#include "text/output_parsers/json_scanner.hpp"
#include "text/output_parsers/json_string_decoder.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_json_scanner {

using courier::text::parsers::json_scanner;
using courier::text::parsers::json_string_decoder;
using step = json_scanner::step;

namespace {

// Pushes `text` and returns the step of its last byte, or error at the first failing byte, or
// done_before with the index of the byte a number ended before.
step scan(const std::string& text, std::size_t* stopped_at = nullptr) {
  json_scanner s;
  step last = step::more;
  for (std::size_t i = 0; i < text.size(); ++i) {
    last = s.push(text[i]);
    if (last != step::more) {
      if (stopped_at) *stopped_at = i;
      return last;
    }
  }
  return last;
}

std::string decode(const std::string& inside) {
  json_string_decoder d;
  std::string out;
  for (char c : inside) d.push(c, out);
  d.finish(out);
  return out;
}

}  // namespace

TEST_CASE("json scanner: accepts JSON values and says where each ends", "[parsers]") {
  for (const std::string v :
       {R"({})", R"([])", R"({"a": [1, -2.5e+3, 0.0, true, false, null, "x\"y\\z\u00e9"]})",
        R"( {"nested": {"deeper": [[[]], {}]}, "s": "}]\"["})", R"("just a string")", "true",
        "null", R"(["é日🎉"])"}) {
    INFO(v);
    std::size_t at = 0;
    CHECK(scan(v, &at) == step::done);
    CHECK(at == v.size() - 1);
  }
}

TEST_CASE("json scanner: a top-level number ends before the byte after it", "[parsers]") {
  std::size_t at = 0;
  CHECK(scan("-12.5e3,", &at) == step::done_before);
  CHECK(at == 7);
  CHECK(scan("0}", &at) == step::done_before);
  CHECK(at == 1);
  CHECK(scan("12") == step::more);  // still may go on
}

TEST_CASE("json scanner: rejects what JSON rejects at the first bad byte", "[parsers]") {
  for (const std::string v :
       {R"({'a': 1})", R"({"a": 1,})", R"([1,])", R"({"a" 1})", R"({"a": 01})", R"([1.])", R"([-])",
        R"([1e])", R"(["\x"])", R"(["\u12G4"])", "[\"a\nb\"]", R"([tru])", R"({"a": 1])", R"([1}])",
        R"({1: 2})", R"(})", R"([nul l])", R"([.5])"}) {
    INFO(v);
    CHECK(scan(v) == step::error);
  }
}

TEST_CASE("json scanner: nesting deeper than max_depth is an error", "[parsers]") {
  CHECK(scan(std::string(json_scanner::max_depth, '[')) == step::more);
  CHECK(scan(std::string(json_scanner::max_depth + 1, '[')) == step::error);
}

TEST_CASE("json scanner: once done or failed, every byte is an error", "[parsers]") {
  json_scanner s;
  CHECK(s.push('1') == step::more);
  CHECK(s.push(' ') == step::done_before);
  CHECK(s.push(' ') == step::error);
}

TEST_CASE("json string decoder: escapes, \\u escapes and surrogate pairs", "[parsers]") {
  CHECK(decode(R"(plain é)") == "plain é");
  CHECK(decode(R"(a\"b\\c\/d\n\t\r\b\f)") == "a\"b\\c/d\n\t\r\b\f");
  CHECK(decode(R"(\u00e9\u65e5\u0041)") == "é日A");
  CHECK(decode(R"(\ud83c\udf89)") == "🎉");
  CHECK(decode(R"(\ud83cx)") == "\xEF\xBF\xBDx");  // a lone high surrogate
  CHECK(decode(R"(\udf89)") == "\xEF\xBF\xBD");    // a lone low surrogate
  CHECK(decode(R"(\ud83c)") == "\xEF\xBF\xBD");    // cut off after the high half
  CHECK(decode(R"(\ud83c\u0041)") ==
        "\xEF\xBF\xBD"
        "A");
}

}  // namespace courier_test_text_output_parsers_json_scanner
