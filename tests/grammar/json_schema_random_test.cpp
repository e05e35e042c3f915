// JSON Schema to GBNF against the reference validator on random documents: values generated
// from each schema (mostly valid), then some mutated, each printed compact and indented. Every
// text the grammar accepts must conform (soundness); every conforming text printed the way the
// grammar writes JSON (properties in schema order, nlohmann's escapes) must be accepted.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "grammar/json_schema.hpp"
#include "tests/grammar/json_schema_oracle.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_json_schema_random {

using namespace courier::grammar;
using namespace courier::grammar::testing;

namespace {

class value_generator {
 public:
  value_generator(std::mt19937& rng, const ojson& root) : rng_(rng), root_(root) {}

  ojson value(const ojson& schema, int depth) {
    if (schema.is_boolean()) return any(depth);
    if (schema.contains("$ref")) {
      return value(root_.at(ojson::json_pointer(schema["$ref"].get<std::string>().substr(1))),
                   depth + 1);
    }
    for (const char* k : {"anyOf", "oneOf", "allOf"}) {
      if (schema.contains(k)) return value(schema[k][pick(schema[k].size())], depth + 1);
    }
    if (schema.value("nullable", false) && coin(0.2)) return nullptr;
    if (schema.contains("examples") && coin(0.7)) {
      return schema["examples"][pick(schema["examples"].size())];
    }
    if (schema.contains("enum")) return schema["enum"][pick(schema["enum"].size())];
    if (schema.contains("const")) return schema["const"];
    const std::string type = type_of(schema);
    if (type == "object") return object(schema, depth);
    if (type == "array") return array(schema, depth);
    if (type == "string") return text(schema);
    if (type == "integer") return integer(schema);
    if (type == "number") return number(schema);
    if (type == "boolean") return coin(0.5);
    if (type == "null") return nullptr;
    return any(depth);
  }

  // A small change somewhere in `v`, which may make it invalid.
  void mutate(ojson& v, int depth) {
    if (v.is_structured() && !v.empty() && coin(0.7) && depth < 8) {
      auto it = v.begin();
      std::advance(it, static_cast<long>(pick(v.size())));
      return mutate(*it, depth + 1);
    }
    switch (pick(6)) {
      case 0:
        v = scalar();
        break;
      case 1:
        if (v.is_object() && !v.empty()) v.erase(v.begin().key());
        if (v.is_array() && !v.empty()) v.erase(v.begin());
        break;
      case 2:
        if (v.is_object()) v[coin(0.5) ? "a" : "name"] = scalar();
        if (v.is_array()) v.push_back(scalar());
        break;
      case 3:
        if (v.is_number_integer()) v = v.get<long>() + 1;
        if (v.is_number_float()) v = v.get<double>() + 0.5;
        break;
      case 4:
        if (v.is_string()) v = v.get<std::string>() + (coin(0.5) ? "x" : "\"");
        break;
      default:
        v = ojson::array({v});
    }
  }

 private:
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  std::string type_of(const ojson& schema) {
    if (schema.contains("type")) {
      const ojson& t = schema["type"];
      return t.is_array() ? t[pick(t.size())].get<std::string>() : t.get<std::string>();
    }
    if (schema.contains("properties") || schema.contains("required")) return "object";
    if (schema.contains("items") || schema.contains("prefixItems")) return "array";
    if (schema.contains("minLength") || schema.contains("pattern")) return "string";
    if (schema.contains("minimum") || schema.contains("maximum")) return "number";
    return "";
  }

  ojson scalar() {
    const ojson choices[] = {nullptr, true, 7, -2.5, "s", ojson::object(), ojson::array()};
    return choices[pick(7)];
  }

  ojson any(int depth) {
    if (depth > 3 || coin(0.6)) return scalar();
    return coin(0.5) ? ojson{{"k", any(depth + 1)}} : ojson::array({any(depth + 1), 1});
  }

  ojson object(const ojson& schema, int depth) {
    ojson out = ojson::object();
    const ojson props = schema.value("properties", ojson::object());
    const ojson required = schema.value("required", ojson::array());
    for (const auto& [name, sub] : props.items()) {
      const bool must = std::find(required.begin(), required.end(), name) != required.end();
      // Shallow enough that an indented print stays within max_whitespace.
      if ((must || (coin(0.5) && depth < 4)) && sub != ojson(false)) {
        out[name] = value(sub, depth + 1);
      }
    }
    const ojson additional = schema.value("additionalProperties", ojson(true));
    for (const ojson& r : required) {
      if (!out.contains(r.get<std::string>())) out[r.get<std::string>()] = value(additional, depth);
    }
    if (additional != ojson(false) && coin(0.3)) {
      for (const char* key : {"x", "extra", "é", "q\"", "aa"}) {
        if (!props.contains(key) && !out.contains(key) && coin(0.4)) {
          out[key] = value(additional, depth + 1);
        }
      }
    }
    return out;
  }

  ojson array(const ojson& schema, int depth) {
    const ojson prefix = schema.value("prefixItems", ojson::array());
    const ojson items = schema.value("items", ojson(true));
    std::size_t lo = schema.value("minItems", std::size_t{0});
    std::size_t hi = std::min(schema.value("maxItems", lo + 4), lo + 4);
    if (items == ojson(false)) hi = std::min(hi, prefix.size());
    const std::size_t n = lo + pick(hi - lo + 1);
    ojson out = ojson::array();
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(value(i < prefix.size() ? prefix[i] : items, depth + 1));
    }
    return out;
  }

  ojson text(const ojson& schema) {
    static const char* const pieces[] = {"a",  "b",  "Z",    "0", " ", "\"", "\\",
                                         "\n", "\t", "\x01", "é", "☃", "😀",  "/"};
    const std::size_t lo = schema.value("minLength", std::size_t{0});
    const std::size_t hi = std::min(schema.value("maxLength", lo + 6), lo + 6);
    std::string s;
    for (std::size_t n = lo + pick(hi - lo + 1); n > 0; --n) s += pieces[pick(14)];
    return s;
  }

  // Between the bounds mostly, one past them sometimes; within +-1000.
  std::pair<long, long> range(const ojson& schema) {
    long lo = -1000;
    long hi = 1000;
    if (schema.contains("minimum")) lo = static_cast<long>(std::ceil(num(schema["minimum"])));
    if (schema.contains("maximum")) hi = static_cast<long>(std::floor(num(schema["maximum"])));
    return {lo - (coin(0.1) ? 1 : 0), std::max(lo, hi) + (coin(0.1) ? 1 : 0)};
  }

  ojson integer(const ojson& schema) {
    const auto [lo, hi] = range(schema);
    return std::uniform_int_distribution<long>(lo, hi)(rng_);
  }

  ojson number(const ojson& schema) {
    const auto [lo, hi] = range(schema);
    const long q = std::uniform_int_distribution<long>(lo * 4, hi * 4)(rng_);
    if (q % 4 == 0) return q / 4;
    return static_cast<double>(q) / 4;
  }

  std::mt19937& rng_;
  const ojson& root_;
};

struct random_case {
  const char* schema;
  bool exact;  // every conforming value, printed by nlohmann, is in the grammar's language
};

const random_case cases[] = {
    {R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
      "age": {"type": "integer", "minimum": 0, "maximum": 150}, "tags": {"type": "array",
      "items": {"type": "string", "minLength": 1}, "maxItems": 3}}, "required": ["name"],
      "additionalProperties": false})",
     true},
    {R"({"type": "object", "properties": {"a": {"type": "number", "exclusiveMinimum": -2,
      "maximum": 3}, "b": {"type": ["boolean", "null"]}, "c": {"enum": ["x", 1, null]}},
      "additionalProperties": {"type": "integer"}})",
     true},
    {R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
      "items": {"type": "boolean"}, "minItems": 1, "maxItems": 4})",
     true},
    {R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
      "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
      "required": ["v"], "additionalProperties": false}}, "$ref": "#/$defs/node"})",
     true},
    {R"({"anyOf": [{"type": "string", "format": "date", "examples": ["2024-02-29",
      "2023-02-29", "1999-12-31"]}, {"type": "integer", "maximum": -5}]})",
     true},
    {R"({"type": "string", "pattern": "^[a-c]+\"?$", "examples": ["abc", "a\"", "b"]})", true},
    {R"({"type": "object", "properties": {"x": {"type": "string", "format": "uuid",
      "examples": ["123e4567-e89b-12d3-a456-426614174000", "123e4567"]}, "y": {"type":
      "string", "format": "email", "examples": ["a@b.co", "a@b"]}}, "required": ["x", "y"]})",
     true},
    {R"({"type": "object", "properties": {"p": {"type": "string", "nullable": true},
      "q": {"oneOf": [{"type": "integer", "minimum": 10}, {"type": "string"}]}},
      "required": ["q"]})",
     true},
    {R"({})", true},
    {R"({"type": "object", "properties": {"n": {"type": "number"}, "k": {"const": {"a": [1]}}},
      "additionalProperties": false})",
     false},
};

}  // namespace

TEST_CASE(
    "json schema: on random documents, accepted means conforming and conforming means "
    "accepted",
    "[grammar]") {
  std::mt19937 rng(77);
  for (const random_case& c : cases) {
    INFO("schema: " << c.schema);
    const schema_language l = compile_schema(c.schema);
    value_generator gen(rng, l.schema);
    int accepted = 0;
    for (int i = 0; i < 300; ++i) {
      ojson v = gen.value(l.schema, 0);
      if (i % 3 == 0) gen.mutate(v, 0);
      for (const int indent : {-1, 2}) {
        const std::string text = v.dump(indent);
        INFO("text: " << text);
        const bool in_language = full_match(l.grammar, text);
        const bool conforming = conforms(ojson::parse(text), l.schema, l.schema);
        if (in_language) CHECK(conforming);
        if (c.exact && conforming) CHECK(in_language);
        accepted += in_language;
      }
    }
    CHECK(accepted > 30);  // the generator makes valid documents too, not only invalid ones
  }
}

}  // namespace courier_test_grammar_json_schema_random
