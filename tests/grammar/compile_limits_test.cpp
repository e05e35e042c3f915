// Compile limits (issue 45): every grammar bomb of the security report either compiles (into a
// grammar whose positions stay few) or is refused with a grammar_error naming the limit, and a
// tiny limit refuses a normal schema, so the checks are shown to be live. Speed is measured in
// bench/grammar (grammar_bench --bombs), never asserted here.
//
// The tests keep the default limits but time: a sanitizer build runs several times slower, and
// the work and memory limits must be what decides, the same on every machine.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/matcher.hpp"
#include "grammar/regex_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_compile_limits {

using namespace courier::grammar;
using ojson = nlohmann::ordered_json;

namespace {

compile_limits defaults_but_time() {
  compile_limits l;
  l.max_time_ms = 600000;
  return l;
}

// The source compiled as admission does (one budget for every stage); nullopt when it compiles,
// else the error's limit ("" for a refusal that is not a limit).
struct outcome {
  std::shared_ptr<const compiled_grammar> grammar;
  std::optional<std::string> limit;
};

outcome compile_regex(const std::string& pattern, const compile_limits& limits) {
  compile_budget budget(limits);
  try {
    const std::string gbnf = "root ::= " + to_gbnf(parse_regex(pattern, budget).e) + "\n";
    return {compile_gbnf(gbnf, budget), std::nullopt};
  } catch (const grammar_error& e) {
    return {nullptr, e.limit};
  }
}

outcome compile_schema(const ojson& schema, const compile_limits& limits) {
  compile_budget budget(limits);
  try {
    return {compile_gbnf(json_schema_to_gbnf(schema, {}, budget), budget), std::nullopt};
  } catch (const grammar_error& e) {
    return {nullptr, e.limit};
  }
}

outcome compile_text(const std::string& gbnf, const compile_limits& limits) {
  try {
    return {compile_gbnf(gbnf, limits), std::nullopt};
  } catch (const grammar_error& e) {
    return {nullptr, e.limit};
  }
}

// "aaaaaa", "baaaaa", ...: distinct six-letter words.
std::string word(int i) {
  std::string w;
  for (int k = 0; k < 6; ++k, i /= 26) w += static_cast<char>('a' + i % 26);
  return w;
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("compile limits: repeats of star-like parts compile as one automaton", "[grammar]") {
  const compile_limits l = defaults_but_time();
  const outcome star = compile_regex("(.*){1,10000}", l);
  REQUIRE(star.grammar);
  CHECK(star.grammar->dfas().size() == 1);
  CHECK(full_match(star.grammar, "any text at all"));
  const outcome gbnf = compile_text("root ::= x{1,10000}\nx ::= [a-z]*\n", l);
  REQUIRE(gbnf.grammar);
  CHECK(full_match(gbnf.grammar, "letters"));
  CHECK_FALSE(full_match(gbnf.grammar, "Letters"));
  const outcome pattern = compile_schema({{"type", "string"}, {"pattern", "(.*){1,10000}"}}, l);
  REQUIRE(pattern.grammar);
  CHECK(full_match(pattern.grammar, R"("abc")"));
}

TEST_CASE("compile limits: long bounded repeats and deep groups compile", "[grammar]") {
  const compile_limits l = defaults_but_time();
  const outcome any = compile_regex("[\\s\\S]{0,10000}", l);
  REQUIRE(any.grammar);
  CHECK(full_match(any.grammar, std::string(10000, 'x')));
  CHECK_FALSE(full_match(any.grammar, std::string(10001, 'x')));
  const outcome letters = compile_regex("[a-z ]{0,4000}qN", l);
  REQUIRE(letters.grammar);
  CHECK(full_match(letters.grammar, "some words qN"));
  const outcome nested = compile_regex(std::string(200, '(') + "a" + std::string(200, ')'), l);
  REQUIRE(nested.grammar);
  CHECK(full_match(nested.grammar, "a"));
}

TEST_CASE("compile limits: a long repeat of a part that can be empty is refused (branches)",
          "[grammar]") {
  const compile_limits l = defaults_but_time();
  CHECK(compile_regex("(a|a?){1,5000}", l).limit == std::optional<std::string>("branches"));
  CHECK(compile_regex("([a-z]*[0-9]*){1,2000}", l).limit == std::optional<std::string>("branches"));
  // A few such copies are fine.
  CHECK(compile_regex("(a|a?){1,50}", l).grammar);
}

TEST_CASE("compile limits: an alternation of many literals compiles as a trie", "[grammar]") {
  const compile_limits l = defaults_but_time();
  std::string regex, gbnf = "root ::= ";
  for (int i = 0; i < 50000; ++i) {
    regex += (i ? "|" : "") + word(i);
    gbnf += fmt::format("{}\"{}\"", i ? " | " : "", word(i));
  }
  for (const outcome& o : {compile_regex(regex, l), compile_text(gbnf + "\n", l)}) {
    REQUIRE(o.grammar);
    CHECK(full_match(o.grammar, word(0)));
    CHECK(full_match(o.grammar, word(49999)));
    CHECK_FALSE(full_match(o.grammar, word(50000)));
    // A trie: the first byte picks among at most 256 ways, not 50,000 parse stacks.
    CHECK(matcher(o.grammar).current().stacks.size() <= 256);
  }
  // 100,000 literals (a `choice` list, or GBNF) compile too.
  std::vector<expr> choices;
  for (int i = 0; i < 100000; ++i)
    choices.push_back(expr::make_literal(fmt::format("value-{}", i)));
  const outcome choice =
      compile_text("root ::= " + to_gbnf(expr::make_alternation(std::move(choices))) + "\n", l);
  REQUIRE(choice.grammar);
  CHECK(full_match(choice.grammar, "value-99999"));
  CHECK_FALSE(full_match(choice.grammar, "value-100000"));
}

TEST_CASE("compile limits: schema bombs are refused naming the limit", "[grammar]") {
  const compile_limits l = defaults_but_time();
  // Built as text: an ordered_json finds a key in linear time, so filling one key by key is
  // quadratic.
  std::string optional_props, long_keys, required_props, required, branches, values;
  for (int i = 0; i < 5000; ++i) {
    optional_props += fmt::format(R"({}"p{}": {{"type": "string"}})", i ? "," : "", i);
  }
  for (int i = 0; i < 3000; ++i) {
    long_keys += fmt::format(R"({}"{:0>64}": {{"type": "boolean"}})", i ? "," : "", i);
    branches += fmt::format(R"({}{{"type": "object", "properties": {{"k{}": {{"type": )"
                            R"("integer"}}}}, "required": ["k{}"]}})",
                            i ? "," : "", i, i);
  }
  for (int i = 0; i < 5000; ++i) {  // 20,000 in the report; 5,000 pass the limit as well
    required_props += fmt::format(R"({}"r{}": {{"type": "integer"}})", i ? "," : "", i);
    required += fmt::format(R"({}"r{}")", i ? "," : "", i);
  }
  for (int i = 0; i < 100000; ++i) values += fmt::format(R"({}"value-{}")", i ? "," : "", i);
  const auto limit_of = [&](const std::string& schema) {
    return compile_schema(ojson::parse(schema), l).limit;
  };
  CHECK(limit_of(R"({"type": "object", "properties": {)" + optional_props + "}}") == "memory");
  CHECK(limit_of(R"({"anyOf": [)" + branches + "]}") == "memory");
  CHECK(limit_of(R"({"type": "object", "properties": {)" + long_keys + "}}") == "memory");
  // 100,000 values compile as a trie (its DFAs take about 96 MB of the 100): whether it
  // compiles depends on the estimate's last few MB; it must not run past the memory limit.
  const std::optional<std::string> enum_limit = limit_of(R"({"enum": [)" + values + "]}");
  CHECK((!enum_limit || enum_limit == "memory"));
  CHECK(limit_of(R"({"type": "object", "properties": {)" + required_props + R"(}, "required": [)" +
                 required + "]}") == "memory");
}

TEST_CASE("compile limits: a tiny limit refuses a normal schema, naming the limit", "[grammar]") {
  const ojson schema = {{"type", "object"},
                        {"properties",
                         {{"name", {{"type", "string"}, {"maxLength", 40}}},
                          {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 150}}},
                          {"code", {{"type", "string"}, {"pattern", "^[A-Z]{3}-[0-9]{4}$"}}}}},
                        {"required", {"name"}}};
  CHECK_FALSE(compile_schema(schema, defaults_but_time()).limit);
  compile_limits work;
  work.max_work = 1000;
  compile_limits memory;
  memory.max_memory_bytes = 4096;
  compile_limits time;
  time.max_time_ms = 0;
  compile_limits branches;
  branches.max_branches = 1;
  CHECK(compile_schema(schema, work).limit == "work");
  CHECK(compile_schema(schema, memory).limit == "memory");
  CHECK(compile_schema(schema, time).limit == "time");
  CHECK(compile_schema(schema, branches).limit == "branches");
  // The message says which limit, and its value.
  try {
    compile_gbnf("root ::= [a-z]{0,100} \"!\"", work);
    FAIL("compiled");
  } catch (const grammar_error& e) {
    CHECK(e.limit == "work");
    CHECK_THAT(e.what(), Catch::Contains("1000 steps"));
  }
  try {
    compile_gbnf("root ::= [a-z]{0,100} \"!\"", memory);
    FAIL("compiled");
  } catch (const grammar_error& e) {
    CHECK(e.limit == "memory");
    CHECK_THAT(e.what(), Catch::Contains("1 MB"));
  }
  // A budget that runs out inside a schema's `pattern` is the budget's error, not the pattern's.
  compile_limits pattern_work;
  pattern_work.max_work = 40;
  compile_budget budget(pattern_work);
  try {
    json_schema_to_gbnf(ojson{{"type", "string"}, {"pattern", std::string(200, 'a')}}, {}, budget);
    FAIL("converted");
  } catch (const grammar_error& e) {
    CHECK(e.limit == "work");
  }
  // Other refusals name no limit.
  CHECK(compile_text("root ::= x\n", defaults_but_time()).limit == std::optional<std::string>(""));
}

TEST_CASE("compile limits: one budget counts every stage", "[grammar]") {
  compile_budget budget;
  const std::string gbnf =
      json_schema_to_gbnf(ojson{{"type", "array"}, {"items", {{"type", "number"}}}}, {}, budget);
  const std::uint64_t converted = budget.work();
  CHECK(converted > 0);
  compile_gbnf(gbnf, budget);
  CHECK(budget.work() > converted);
  CHECK(budget.peak_memory() > 0);
  CHECK(budget.peak_memory() < budget.limits().max_memory_bytes);
}

TEST_CASE("compile limits: the test schemas and grammars compile under the defaults", "[grammar]") {
  const std::filesystem::path data = COURIER_TEST_DATA;
  int compiled = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data / "schemas")) {
    INFO(entry.path().string());
    CHECK_NOTHROW(compile_gbnf(json_schema_to_gbnf(ojson::parse(read(entry.path())))));
    ++compiled;
  }
  CHECK_NOTHROW(compile_gbnf(read(data / "grammars" / "json.gbnf")));
  CHECK(compiled >= 9);
}

}  // namespace courier_test_grammar_compile_limits
