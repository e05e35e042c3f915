#pragma once
// Every JSON text courier parses from outside (a request body, JSON held in a string of one: a
// schema, tool-call arguments; a model's or adapter's JSON files) goes through here: its nesting
// is measured on the raw bytes first, without recursion, and a text nested deeper than the
// caller's bound is refused before it is parsed. nlohmann's parser is iterative, but much of
// what is done with a parsed value afterwards (dump, copies into a chat template's context,
// tojson, a schema's compiler) recurses once per level: 60,000 levels overflow the stack.
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace courier::base {

// The deepest nesting of arrays and objects in `text`, counting only brackets outside strings;
// stops once past `limit` and returns limit + 1. Malformed JSON is counted all the same (the
// parser rejects it afterwards).
int json_nesting_depth(std::string_view text, int limit);

// Why parse_json_text gave no value.
enum class json_text_error { none, too_deep, malformed, number_out_of_range };

template <class Json>
struct parsed_json {
  Json value;                               // discarded unless error == none
  json_text_error error = json_text_error::none;
  std::string message;                      // the parser's words when malformed or out of range
  explicit operator bool() const { return error == json_text_error::none; }
};

// Parses `text` when it nests at most `max_depth` levels; never throws for bad input.
template <class Json>
parsed_json<Json> parse_json_text(std::string_view text, int max_depth);

extern template parsed_json<nlohmann::json> parse_json_text(std::string_view, int);
extern template parsed_json<nlohmann::ordered_json> parse_json_text(std::string_view, int);

// The value of `text` when it nests at most `max_depth` levels and is valid JSON; else nullopt.
template <class Json>
std::optional<Json> try_parse_json_text(std::string_view text, int max_depth) {
  auto p = parse_json_text<Json>(text, max_depth);
  if (!p) return std::nullopt;
  return std::move(p.value);
}

}  // namespace courier::base
