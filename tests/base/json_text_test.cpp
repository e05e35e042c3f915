// base/json_text against nlohmann's own parser: the ordered parse (built with a hash of each
// object's keys, not ordered_map's scan) gives the same value, member order and repeated-key
// rule; the errors are the same kinds; nesting past the bound is refused before parsing.
#include "base/json_text.hpp"

#include <catch2/catch.hpp>
#include <string>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_base_json_text {

using courier::base::json_text_error;
using courier::base::parse_json_text;
using nlohmann::ordered_json;

TEST_CASE("json text: the ordered parse equals nlohmann's, member order and repeated keys "
          "included",
          "[base]") {
  for (const char* text : {
           R"({"b": 1, "a": [1, 2.5, -3, 18446744073709551615, "x", null, true, false], "c": {}})",
           R"({"k": 1, "j": 2, "k": 3})",  // repeated: first place, last value
           R"([{"z": {"y": {"x": []}}}, {}, [], "\u00e9\ud83d\ude00", 1e-300, -0.0])",
           R"("just a string")", "42", "null",
           R"({"a": {"a": 1, "b": 2, "a": {"c": 3}}, "a": 4, "b": [{"b": 1, "b": 2}]})"}) {
    INFO(text);
    const auto p = parse_json_text<ordered_json>(text, 64);
    REQUIRE(p);
    const ordered_json want = ordered_json::parse(text);
    CHECK(p.value == want);
    CHECK(p.value.dump() == want.dump());  // the same order of members
  }
}

TEST_CASE("json text: an object of 100,000 members keeps their order; repeated keys stay one",
          "[base]") {
  // nlohmann's ordered_json parse scans every member on each insert: this object took seconds.
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) {
    text += (i ? ",\"k" : "\"k") + std::to_string(99999 - i) + "\":" + std::to_string(i);
  }
  text += ",\"k5\":\"again\"}";
  const auto p = parse_json_text<ordered_json>(text, 64);
  REQUIRE(p);
  REQUIRE(p.value.size() == 100000);
  auto it = p.value.begin();
  CHECK(it.key() == "k99999");
  CHECK(*it == 0);
  CHECK(std::prev(p.value.end()).key() == "k0");
  CHECK(p.value.at("k5") == "again");                          // the last value
  CHECK(std::next(p.value.begin(), 99994).key() == "k5");     // in its first place
}

TEST_CASE("json text: errors are the parser's kinds, and nesting past the bound is refused",
          "[base]") {
  auto err = [](const std::string& text, int depth = 64) {
    return parse_json_text<ordered_json>(text, depth).error;
  };
  CHECK(err(R"({"a": 1e400})") == json_text_error::number_out_of_range);
  CHECK(err(R"({"a": 1,})") == json_text_error::malformed);
  CHECK(err(R"({"a" 1})") == json_text_error::malformed);
  CHECK(err("{} []") == json_text_error::malformed);  // one value, nothing after it
  CHECK(err("") == json_text_error::malformed);
  CHECK_FALSE(parse_json_text<ordered_json>(R"({"a": 1,})", 64).message.empty());
  CHECK(err(std::string(65, '[') + std::string(65, ']')) == json_text_error::too_deep);
  CHECK(err(std::string(64, '[') + std::string(64, ']')) == json_text_error::none);
  CHECK(err(R"(["[[[[", "]]]]"])", 2) == json_text_error::none);  // brackets in strings
  CHECK(parse_json_text<nlohmann::json>(R"({"a": 1e400})", 64).error ==
        json_text_error::number_out_of_range);
}

}  // namespace courier_test_base_json_text
