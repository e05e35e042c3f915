#include "base/json_text.hpp"

namespace courier::base {

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

template <class Json>
parsed_json<Json> parse_json_text(std::string_view text, int max_depth) {
  parsed_json<Json> out;
  out.value = Json(nlohmann::json::value_t::discarded);
  if (json_nesting_depth(text, max_depth) > max_depth) {
    out.error = json_text_error::too_deep;
    return out;
  }
  try {
    out.value = Json::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    out.error = json_text_error::number_out_of_range;  // a number beyond a double's (1e400)
    out.message = e.what();
  } catch (const nlohmann::json::exception& e) {
    out.error = json_text_error::malformed;
    out.message = e.what();
  }
  return out;
}

template parsed_json<nlohmann::json> parse_json_text(std::string_view, int);
template parsed_json<nlohmann::ordered_json> parse_json_text(std::string_view, int);

}  // namespace courier::base
