#include "actors/admission/json_body.hpp"

#include <fmt/format.h>

#include "actors/admission/api_error.hpp"

namespace courier::admission {

int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > limit) return limit + 1;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

namespace {

// The key of the innermost object member whose value was being parsed when the parser gave up
// (only called on an error: it parses the body a second time).
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

template <class Json>
Json parse_checked(std::string_view body, int max_depth) {
  if (json_nesting_depth(body, max_depth) > max_depth) {
    throw api_error(400,
                    fmt::format("the body nests arrays and objects more than {} levels deep "
                                "(server.max_json_depth)",
                                max_depth));
  }
  Json j;
  try {
    j = Json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    throw api_error(400, std::string("the body is not valid JSON: ") + e.what());
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): name the field it belongs to.
    const std::string field = key_of_overflow(body);
    throw api_error(400,
                    field.empty() ? fmt::format("a number is out of range: {}", e.what())
                                  : fmt::format("'{}': the number is out of range", field),
                    field);
  } catch (const nlohmann::json::exception& e) {
    throw api_error(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw api_error(400, "the body must be a JSON object");
  return j;
}

}  // namespace

nlohmann::json parse_json_body(std::string_view body, int max_depth) {
  return parse_checked<nlohmann::json>(body, max_depth);
}

nlohmann::ordered_json parse_ordered_json_body(std::string_view body, int max_depth) {
  return parse_checked<nlohmann::ordered_json>(body, max_depth);
}

}  // namespace courier::admission
