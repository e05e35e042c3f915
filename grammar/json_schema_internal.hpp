#pragma once
// Internals of the JSON Schema to GBNF converter (json_schema*.cpp): not part of grammar/'s
// interface. The converter walks a schema once, top-down, and writes one GBNF rule per object,
// array, `$ref` target and large piece; everything small and regular (strings, numbers, enums,
// ranges) stays inline so that the compiler can lex it with one DFA.
//
// Invariants: every C++ recursion over the schema goes through visit(), which counts depth
// (max_schema_depth) and work (max_schema_visits); a `$ref` is never expanded in place: its target
// becomes a rule of its own, converted once from a queue, so a cycle is a recursive rule. The
// text made is charged to the compile_budget as rules are defined (define_rule), and no piece
// of text is copied once per member or branch (the GBNF is linear in the schema).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/compile_limits.hpp"
#include "grammar/json_schema.hpp"

namespace courier::grammar::json_schema_detail {

using json = nlohmann::ordered_json;

// Nesting of schemas within schemas (properties, items, anyOf ...) past which a schema is refused.
constexpr int max_schema_depth = 64;
// Schemas visited in all (every `$ref` target once): bounds the work an untrusted schema can ask.
constexpr std::size_t max_schema_visits = 100000;
// A string with a maxLength up to this is one DFA; a longer one repeats the `char` rule.
constexpr std::uint64_t max_inline_string_length = 32;

// The JSON types, as bits.
enum type_bits : unsigned {
  type_null = 1u,
  type_boolean = 2u,
  type_object = 4u,
  type_array = 8u,
  type_string = 16u,
  type_number = 32u,
  type_integer = 64u,
  type_any = 127u,
};

// The type names, in the order a schema of several types lists its alternatives.
constexpr std::pair<std::string_view, unsigned> type_names[] = {
    {"null", type_null},      {"boolean", type_boolean}, {"object", type_object},
    {"array", type_array},    {"string", type_string},   {"number", type_number},
    {"integer", type_integer}};

// --- keywords (json_schema_keywords.cpp) ---

// Keywords with no effect on the language (title, description ...).
bool is_annotation(std::string_view keyword);
// Every supported keyword, and the types it constrains (0: it applies to every type). A schema
// without `type` is taken to be of the types its keywords constrain, or of any type.
const std::map<std::string_view, unsigned>& keyword_types();
// `v` is of one of `types` (an integer: any number with a zero fraction, 1.0 included).
bool has_type(const json& v, unsigned types);

// --- GBNF text (json_schema_gbnf.cpp) ---

// `bytes` as a GBNF string literal.
std::string gbnf_quote(std::string_view bytes);
// `items` joined by spaces, empty ones left out.
std::string gbnf_sequence(const std::vector<std::string>& items);
// `alts` joined by " | ".
std::string join_alternatives(const std::vector<std::string>& alts);
// `e` wrapped in parentheses unless it is one name, literal, class or group already.
std::string gbnf_group(const std::string& e);
// `atom` repeated min..max times (max == unbounded: no limit); "" when max is 0.
constexpr std::uint64_t unbounded = ~std::uint64_t{0};
std::string gbnf_repeat(const std::string& atom, std::uint64_t min, std::uint64_t max);
// A rule name made of the characters of `hint` that GBNF allows.
std::string rule_name_stem(std::string_view hint);
// A JSON pointer segment, escaped (RFC 6901).
std::string pointer_segment(std::string_view key);

// --- JSON's own syntax (json_schema_strings.cpp, json_schema_numbers.cpp) ---

// One character of a JSON string's text: a plain code point or an escape.
std::string json_char_body();
// The part of a \uXXXX escape after the backslash (a surrogate pair as one escape).
std::string json_unicode_escape_body();
// A whole JSON string, quotes included.
std::string json_string_body();
std::string json_number_body();
std::string json_integer_body();
// The string `"..."` for a `format` value (date-time, date, time, uuid, email); "" if unknown.
std::string format_string_body(std::string_view format);

// Where a schema is, and what to call the rule made for it.
struct location {
  std::string pointer;     // JSON pointer in the document, for errors
  std::string hint;        // the stem of a rule name made here
  int depth = 0;           // schemas above this one
  std::string own_name;    // non-empty: the schema's outermost rule is defined under this name
  std::string head_owner;  // the rule whose first token this schema is (for $ref cycles), or ""
};

class converter {
 public:
  converter(const json& root, const json_schema_options& opts, compile_budget& budget);

  // The GBNF of the whole schema.
  std::string convert();
  // The GBNF of any JSON object.
  std::string convert_any_object();

 private:
  // --- json_schema.cpp: dispatch, keywords, $ref, enum, anyOf ---
  std::string visit(const json& schema, const location& at);
  std::string visit_core(const json& schema, const location& at);
  std::string visit_ref(const json& schema, const location& at);
  std::string visit_alternatives(const json& schema, const location& at);
  std::string visit_enum(const json& schema, const location& at, unsigned types);
  std::string visit_type(const json& schema, const location& at, unsigned type);
  void convert_pending_refs();
  void check_head_cycles() const;
  std::string render() const;

  // --- json_schema_keywords.cpp ---
  void check_keywords(const json& schema, const location& at) const;
  void check_only_annotations_beside(const json& schema, const location& at,
                                     std::string_view keyword) const;
  unsigned declared_types(const json& schema, const location& at) const;
  // Non-negative integer keyword (minItems ...), or `fallback` when absent.
  std::uint64_t count_keyword(const json& schema, const char* keyword, std::uint64_t fallback,
                              const location& at) const;

  // --- json_schema_gbnf.cpp: the rule table ---
  // The name of a rule with this body: an existing one with the same body, or a new one.
  std::string add_rule(const std::string& hint, const std::string& body);
  // Defines `name` (already reserved) as `body`.
  void define_rule(const std::string& name, const std::string& body);
  std::string reserve_name(const std::string& hint);
  // What visit returns for `body`: defined under at.own_name if set, else a rule of its own when
  // `own_rule` or the body is large, else the body inline.
  std::string finish(const location& at, const std::string& body, bool own_rule);
  // A built-in rule (value, object, array, string, char, number, integer, format-*), defined
  // on first use.
  std::string builtin(const std::string& name);
  [[noreturn]] void fail(const location& at, const std::string& what) const;
  location child(const location& at, std::string_view keyword) const;
  location child(const location& at, std::string_view keyword, std::string_view key,
                 std::string_view hint) const;

  // --- json_schema_objects.cpp ---
  std::string visit_object(const json& schema, const location& at);
  std::string visit_array(const json& schema, const location& at);
  std::string object_members(const std::vector<std::pair<std::string, bool>>& members,
                             const std::string& extra, const location& at);
  std::string any_value_body(const std::string& name);

  // --- json_schema_keys.cpp ---
  // A JSON string token whose text is none of `declared` written as nlohmann writes it.
  std::string extra_key(const std::vector<std::string>& declared, const location& at);

  // --- json_schema_strings.cpp ---
  std::string visit_string(const json& schema, const location& at);
  std::string pattern_string(const std::string& pattern, const location& at);

  // --- json_schema_numbers.cpp ---
  std::string visit_number(const json& schema, const location& at, bool integer);

  const json& root_;
  json_schema_options opts_;
  compile_budget& budget_;
  std::string ws_;   // whitespace between tokens, GBNF; empty when compact
  std::string sep_;  // a comma between members or items, with its whitespace
  std::vector<std::pair<std::string, std::string>> rules_;  // name, body; in definition order
  std::map<std::string, std::string> rule_of_body_;
  std::set<std::string> names_;                                    // taken or reserved
  std::map<std::string, std::string> ref_rules_;                   // JSON pointer -> rule name
  std::vector<std::pair<std::string, std::string>> pending_refs_;  // pointer, rule; to convert
  std::map<std::string, std::set<std::string>> head_refs_;         // rule -> rules it starts with
  std::set<std::string> builtins_defined_;
  std::size_t num_visits_ = 0;
};

}  // namespace courier::grammar::json_schema_detail
