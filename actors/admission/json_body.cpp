#include "actors/admission/json_body.hpp"

#include <fmt/format.h>

#include "actors/admission/api_error.hpp"

namespace courier::admission {

namespace {

// The key of the innermost object member whose value was being parsed when the parser gave up
// (only called on an error, on a body already known to be shallow: it parses it a second time).
std::string key_of_overflow(std::string_view body) {
  std::string last_key;
  auto note_keys = [&last_key](int, nlohmann::json::parse_event_t event, nlohmann::json& v) {
    if (event == nlohmann::json::parse_event_t::key) last_key = v.get<std::string>();
    return true;
  };
  try {
    const nlohmann::json ignored = nlohmann::json::parse(body, note_keys);
  } catch (const nlohmann::json::exception&) {
  }
  return last_key;
}

std::string too_deep(const char* what, int max_depth) {
  return fmt::format("{} nests arrays and objects more than {} levels deep "
                     "(server.max_json_depth)",
                     what, max_depth);
}

template <class Json>
Json parse_checked(std::string_view body, int max_depth) {
  auto p = base::parse_json_text<Json>(body, max_depth);
  switch (p.error) {
    case base::json_text_error::none: break;
    case base::json_text_error::too_deep: throw api_error(400, too_deep("the body", max_depth));
    case base::json_text_error::malformed:
      throw api_error(400, "the body is not valid JSON: " + p.message);
    case base::json_text_error::number_out_of_range: {
      const std::string field = key_of_overflow(body);
      throw api_error(400,
                      field.empty() ? fmt::format("a number is out of range: {}", p.message)
                                    : fmt::format("'{}': the number is out of range", field),
                      field);
    }
  }
  if (!p.value.is_object()) throw api_error(400, "the body must be a JSON object");
  return std::move(p.value);
}

}  // namespace

nlohmann::json parse_json_body(std::string_view body, int max_depth) {
  return parse_checked<nlohmann::json>(body, max_depth);
}

nlohmann::ordered_json parse_ordered_json_body(std::string_view body, int max_depth) {
  return parse_checked<nlohmann::ordered_json>(body, max_depth);
}

std::optional<nlohmann::ordered_json> parse_json_in_string(std::string_view text, int max_depth,
                                                           const std::string& field) {
  auto p = base::parse_json_text<nlohmann::ordered_json>(text, max_depth);
  if (p.error == base::json_text_error::too_deep) {
    throw api_error(400, fmt::format("'{}': {}", field, too_deep("the JSON text", max_depth)),
                    field);
  }
  if (!p) return std::nullopt;
  return std::move(p.value);
}

}  // namespace courier::admission
