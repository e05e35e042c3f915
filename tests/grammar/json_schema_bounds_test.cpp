// JSON Schema to GBNF, as languages: numeric bounds (checked exhaustively over small ranges
// against the arithmetic), string lengths, patterns and formats.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "grammar/json_schema.hpp"
#include "tests/grammar/json_schema_oracle.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_json_schema_bounds {

using namespace courier::grammar;
using namespace courier::grammar::testing;

namespace {

std::shared_ptr<const compiled_grammar> grammar_of(const ojson& schema) {
  const std::string gbnf = json_schema_to_gbnf(schema);
  INFO("gbnf:\n" << gbnf);
  std::shared_ptr<const compiled_grammar> g;
  REQUIRE_NOTHROW(g = compile_gbnf(gbnf));
  return g;
}

// Every integer in [-1100, 1100] is accepted exactly when it lies in [lo, hi].
void check_integer_range(const ojson& schema, std::optional<long> lo, std::optional<long> hi) {
  INFO("schema: " << schema.dump());
  const auto g = grammar_of(schema);
  for (long n = -1100; n <= 1100; ++n) {
    const bool in = (!lo || n >= *lo) && (!hi || n <= *hi);
    INFO("n = " << n);
    REQUIRE(full_match(g, std::to_string(n)) == in);
  }
  CHECK_FALSE(full_match(g, "-0"));
  CHECK_FALSE(full_match(g, "00"));
  CHECK_FALSE(full_match(g, "1.0"));
}

}  // namespace

TEST_CASE("json schema: integer bounds allow exactly the integers between them", "[grammar]") {
  check_integer_range({{"type", "integer"}, {"minimum", 0}}, 0, std::nullopt);
  check_integer_range({{"type", "integer"}, {"minimum", 1}}, 1, std::nullopt);
  check_integer_range({{"type", "integer"}, {"maximum", 0}}, std::nullopt, 0);
  check_integer_range({{"type", "integer"}, {"maximum", -10}}, std::nullopt, -10);
  check_integer_range({{"type", "integer"}, {"minimum", -99}, {"maximum", 1000}}, -99, 1000);
  check_integer_range({{"type", "integer"}, {"minimum", 7}, {"maximum", 7}}, 7, 7);
  check_integer_range({{"type", "integer"}, {"minimum", 100}, {"maximum", 199}}, 100, 199);
  check_integer_range({{"type", "integer"}, {"minimum", 9}, {"maximum", 10}}, 9, 10);
  check_integer_range({{"type", "integer"}, {"exclusiveMinimum", -1}, {"exclusiveMaximum", 10}}, 0,
                      9);
  check_integer_range({{"type", "integer"}, {"minimum", 1.5}, {"maximum", 20.9}}, 2, 20);
  check_integer_range({{"type", "integer"}, {"exclusiveMinimum", -2.5}, {"maximum", 30.5}}, -2, 30);
  check_integer_range({{"type", "integer"}, {"minimum", -7.5}, {"exclusiveMaximum", 10.0}}, -7, 9);
}

TEST_CASE("json schema: random integer ranges match the arithmetic", "[grammar]") {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<long> bound(-1050, 1050);
  for (int i = 0; i < 25; ++i) {
    long lo = bound(rng);
    long hi = bound(rng);
    if (lo > hi) std::swap(lo, hi);
    const bool exclusive = i % 3 == 0;
    ojson schema = {{"type", "integer"}};
    schema[exclusive ? "exclusiveMinimum" : "minimum"] = exclusive ? lo - 1 : lo;
    schema[exclusive ? "exclusiveMaximum" : "maximum"] = exclusive ? hi + 1 : hi;
    check_integer_range(schema, lo, hi);
  }
}

TEST_CASE("json schema: integer bounds reach the ends of int64 and uint64", "[grammar]") {
  const auto up = grammar_of({{"type", "integer"}, {"minimum", 9223372036854775807LL}});
  CHECK(full_match(up, "9223372036854775807"));
  CHECK(full_match(up, "9223372036854775808"));
  CHECK(full_match(up, "100000000000000000000000"));
  CHECK_FALSE(full_match(up, "9223372036854775806"));
  CHECK_FALSE(full_match(up, "-1"));
  const auto down = grammar_of({{"type", "integer"}, {"maximum", INT64_MIN}});
  CHECK(full_match(down, "-9223372036854775808"));
  CHECK(full_match(down, "-9223372036854775809"));
  CHECK_FALSE(full_match(down, "-9223372036854775807"));
  const auto top =
      grammar_of({{"type", "integer"}, {"minimum", 0}, {"maximum", 18446744073709551615ULL}});
  CHECK(full_match(top, "18446744073709551615"));
  CHECK(full_match(top, "0"));
  CHECK_FALSE(full_match(top, "18446744073709551616"));
  const auto above =
      grammar_of({{"type", "integer"}, {"exclusiveMinimum", 18446744073709551615ULL}});
  CHECK(full_match(above, "18446744073709551616"));
  CHECK_FALSE(full_match(above, "18446744073709551615"));
}

TEST_CASE("json schema: draft 4's boolean exclusiveMinimum makes minimum exclusive", "[grammar]") {
  check_integer_range({{"type", "integer"},
                       {"minimum", 5},
                       {"exclusiveMinimum", true},
                       {"maximum", 9},
                       {"exclusiveMaximum", false}},
                      6, 9);
  check_language(R"({"type": "number", "minimum": 0, "exclusiveMinimum": true})", {"0.5", "1"},
                 {"0", "0.0", "-1"});
}

TEST_CASE("json schema: number bounds allow exactly the decimals between them", "[grammar]") {
  struct range {
    const char* schema;
    std::optional<double> lo;
    bool lo_open;
    std::optional<double> hi;
    bool hi_open;
  };
  const range ranges[] = {
      {R"({"type": "number", "minimum": 0})", 0, false, std::nullopt, false},
      {R"({"type": "number", "exclusiveMinimum": 0})", 0, true, std::nullopt, false},
      {R"({"type": "number", "maximum": 0})", std::nullopt, false, 0, false},
      {R"({"type": "number", "exclusiveMaximum": 0})", std::nullopt, false, 0, true},
      {R"({"type": "number", "minimum": -3, "maximum": 12})", -3, false, 12, false},
      {R"({"type": "number", "exclusiveMinimum": -3, "exclusiveMaximum": 12})", -3, true, 12, true},
      {R"({"type": "number", "minimum": 2, "exclusiveMaximum": 3})", 2, false, 3, true},
      {R"({"type": "number", "exclusiveMinimum": 2, "maximum": 3})", 2, true, 3, false},
      {R"({"type": "number", "minimum": -20, "maximum": -10})", -20, false, -10, false},
      {R"({"type": "number", "minimum": 5, "maximum": 5})", 5, false, 5, false},
      {R"({"type": "number", "minimum": 1.0, "maximum": 100.0})", 1, false, 100, false},
  };
  for (const range& r : ranges) {
    INFO("schema: " << r.schema);
    const schema_language l = compile_schema(r.schema);
    for (int q = -130; q <= 130; ++q) {
      const double v = q / 4.0;
      char text[32];
      std::snprintf(text, sizeof text, q % 4 == 0 ? "%.0f" : "%.2f", v);
      const bool in = (!r.lo || (r.lo_open ? v > *r.lo : v >= *r.lo)) &&
                      (!r.hi || (r.hi_open ? v < *r.hi : v <= *r.hi));
      INFO("text: " << text);
      CHECK(full_match(l.grammar, text) == in);
      if (in) check_accepts(l, text);
    }
    check_rejects(l, "1e1");
    check_rejects(l, "-0");
    check_rejects(l, "-0.0");
  }
}

TEST_CASE("json schema: minLength and maxLength count characters, an escape as one", "[grammar]") {
  for (const auto& [lo, hi] : {std::pair<int, int>{2, 5}, {0, 0}, {3, 1000}, {0, 40}, {35, 40}}) {
    ojson schema = {{"type", "string"}, {"minLength", lo}};
    if (hi != 1000) schema["maxLength"] = hi;
    INFO("schema: " << schema.dump());
    const schema_language l = compile_schema(schema.dump());
    for (const char* unit : {"a", "é", "😀", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\\""}) {
      std::string body;
      for (int n = 0; n <= 45; ++n, body += unit) {
        const std::string text = "\"" + body + "\"";
        if (n >= lo && n <= hi) {
          check_accepts(l, text);
        } else {
          check_rejects(l, text);
        }
      }
    }
  }
}

TEST_CASE("json schema: a pattern constrains the decoded string", "[grammar]") {
  check_language(R"({"type": "string", "pattern": "^[a-z]+$"})", {R"("abc")", R"("z")"},
                 {R"("")", R"("aB")", R"("a1")", R"("abc\n")"});
  check_language(R"({"type": "string", "pattern": "\\d{3}"})",
                 {R"("123")", R"("x123y")", R"("a\"1234\n")", R"("\\000")"},
                 {R"("12")", R"("1x23")", R"("")"});
  check_language(R"({"type": "string", "pattern": "^(foo|bar)-\\d+$"})",
                 {R"("foo-1")", R"("bar-42")"}, {R"("baz-1")", R"("foo-")", R"("foo-1 ")"});
  check_language(R"({"type": "string", "pattern": "^a\"b\\\\c$"})", {R"("a\"b\\c")"},
                 {R"("a"b\c")", R"("a\"b\c")", R"("ab")"});
  check_language(R"({"type": "string", "pattern": "^\\n\\t\\x01$"})", {R"("\n\t\u0001")"},
                 {"\"\n\t\x01\"", R"("\u000a\t\u0001")", R"("\n\t\u0002")"});
  check_language(R"({"type": "string", "pattern": "^.{2}$"})", {R"("ab")", R"("\t\"")"},
                 {R"("a")", R"("a\n")", R"("abc")"});
}

TEST_CASE("json schema: a pattern allows characters beyond ASCII", "[grammar]") {
  const auto g = grammar_of({{"type", "string"}, {"pattern", "^[α-ω]+☃?$"}});
  CHECK(full_match(g, "\"αβγ\""));
  CHECK(full_match(g, "\"ω☃\""));
  CHECK_FALSE(full_match(g, "\"a\""));
  CHECK_FALSE(full_match(g, "\"☃\""));
  const auto two = grammar_of({{"type", "string"}, {"pattern", "^.{2}$"}});
  CHECK(full_match(two, "\"é😀\""));
  CHECK_FALSE(full_match(two, "\"é😀a\""));
}

TEST_CASE("json schema: format date allows real calendar dates", "[grammar]") {
  check_language(R"({"type": "string", "format": "date"})",
                 {R"("2024-02-29")", R"("2000-02-29")", R"("1996-02-29")", R"("0004-02-29")",
                  R"("2023-02-28")", R"("2023-12-31")", R"("2023-04-30")", R"("0001-01-01")",
                  R"("1999-07-31")"},
                 {R"("2023-04-31")", R"("2023-13-01")", R"("2023-00-10")", R"("2023-1-01")",
                  R"("2023-02-30")", R"("2023-06-00")", R"("23-06-01")", R"("2023-06-01T")",
                  R"("2023-02-29")", R"("1900-02-29")", R"("2100-02-29")", R"("2022-02-29")"});
  // Every year 0000..9999 against the leap-year rule.
  const auto g = grammar_of({{"type", "string"}, {"format", "date"}});
  int wrong = 0;
  for (int year = 0; year <= 9999; ++year) {
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (full_match(g, fmt::format("\"{:04}-02-29\"", year)) != leap) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("json schema: format time and date-time follow RFC 3339", "[grammar]") {
  check_language(
      R"({"type": "string", "format": "time"})",
      {R"("23:59:59Z")", R"("00:00:00+05:30")", R"("12:34:56.789-08:00")", R"("12:34:56z")"},
      {R"("24:00:00Z")", R"("12:60:00Z")", R"("02:29:60Z")", R"("23:59:60Z")", R"("12:34:56")", R"("12:34Z")", R"("12:34:56.Z")",
       R"("12:34:56+5:30")"});
  check_language(R"({"type": "string", "format": "date-time"})",
                 {R"("2024-01-01T00:00:00Z")", R"("2024-01-01t00:00:00.5+01:00")"},
                 {R"("2024-01-01 00:00:00Z")", R"("2024-01-01T00:00:00")", R"("2024-01-01")"});
}

TEST_CASE("json schema: format uuid and email", "[grammar]") {
  check_language(
      R"({"type": "string", "format": "uuid"})",
      {R"("123e4567-e89b-12d3-a456-426614174000")", R"("123E4567-E89B-12D3-A456-426614174000")"},
      {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400")",
       R"("g23e4567-e89b-12d3-a456-426614174000")"});
  check_language(R"({"type": "string", "format": "email"})",
                 {R"("a.b+c@example.co.uk")", R"("x@y.io")", R"("o'brien@mail-1.example.com")"},
                 {R"("a@b")", R"("@b.com")", R"("a..b@x.com")", R"("a@-x.com")", R"("a b@x.com")",
                  R"("a@x..com")", R"("a@x.com.")", R"(".a@x.com")"});
}

}  // namespace courier_test_grammar_json_schema_bounds
