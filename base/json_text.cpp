#include "base/json_text.hpp"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

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

namespace {

// Builds an ordered_json as nlohmann's own parser does (a repeated key keeps its first place and
// takes the last value), but finds a repeated key by a hash of the object's keys: ordered_map's
// emplace scans every member before it, so an object of n members cost n^2/2 string compares
// (80,000 keys in an 870 KB body: 5 s of a text thread).
class ordered_builder {
 public:
  using json = nlohmann::ordered_json;
  using members = std::vector<json::object_t::value_type>;  // ordered_map's own vector

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(json(v)); }
  bool string(json::string_t& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool key(json::string_t& k) {
    levels_.back().key = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    out_of_range_ = dynamic_cast<const nlohmann::detail::out_of_range*>(&e) != nullptr;
    message_ = e.what();
    return false;
  }

  json& result() { return root_; }
  bool out_of_range() const { return out_of_range_; }
  const std::string& message() const { return message_; }

 private:
  struct level {
    json value;
    std::string key;                                    // an object's: the member's being read
    std::unordered_map<std::string, std::size_t> index;  // an object's: key -> its place
  };

  bool open(json v) {
    levels_.push_back(level{std::move(v), {}, {}});
    return true;
  }
  bool close() {
    json v = std::move(levels_.back().value);
    levels_.pop_back();
    return put(std::move(v));
  }
  bool put(json v) {
    if (levels_.empty()) {
      root_ = std::move(v);
      return true;
    }
    level& l = levels_.back();
    if (l.value.is_array()) {
      l.value.get_ref<json::array_t&>().push_back(std::move(v));
      return true;
    }
    members& m = l.value.get_ref<json::object_t&>();
    const auto [at, fresh] = l.index.emplace(l.key, m.size());
    if (fresh) {
      m.emplace_back(std::move(l.key), std::move(v));
    } else {
      m[at->second].second = std::move(v);
    }
    return true;
  }

  json root_;
  std::vector<level> levels_;
  bool out_of_range_ = false;
  std::string message_;
};

template <class Json>
void parse_into(parsed_json<Json>& out, std::string_view text) {
  out.value = Json::parse(text);
}

void parse_into(parsed_json<nlohmann::ordered_json>& out, std::string_view text) {
  ordered_builder b;
  if (nlohmann::ordered_json::sax_parse(text, &b)) {
    out.value = std::move(b.result());
    return;
  }
  out.error = b.out_of_range() ? json_text_error::number_out_of_range : json_text_error::malformed;
  out.message = b.message();
}

}  // namespace

template <class Json>
parsed_json<Json> parse_json_text(std::string_view text, int max_depth) {
  parsed_json<Json> out;
  out.value = Json(nlohmann::json::value_t::discarded);
  if (json_nesting_depth(text, max_depth) > max_depth) {
    out.error = json_text_error::too_deep;
    return out;
  }
  try {
    parse_into(out, text);
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
