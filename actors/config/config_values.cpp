// Reading one YAML value by the config's rules (actors/config/README.md, "Keys"): the types,
// the ranges, and the words of the errors.
#include "actors/config/config_values.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

#include <fmt/format.h>

namespace courier::config::values {

// One line, bounded: newlines and control characters escaped, long values cut.
std::string one_line(std::string_view text) {
  constexpr std::size_t k_max_chars = 80;
  std::string out;
  for (const char c : text.substr(0, k_max_chars)) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  if (text.size() > k_max_chars) out += "...";
  return out;
}

// A plain scalar is unquoted and untagged: the only kind YAML resolves to a number or a bool.
bool is_plain_scalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "?";
}

// What a value was, for "got ..." in messages.
std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "an empty value";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (!is_plain_scalar(node)) return fmt::format("the string \"{}\"", one_line(node.Scalar()));
  return fmt::format("'{}'", one_line(node.Scalar()));
}

namespace {

enum class int_parse { ok, not_integer, out_of_range };

int_parse parse_integer(std::string_view text, std::int64_t& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty() || text.front() == '+') return int_parse::not_integer;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return int_parse::out_of_range;
  if (ec != std::errc() || end != text.data() + text.size()) return int_parse::not_integer;
  return int_parse::ok;
}

std::string integer_kind(std::int64_t min) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return fmt::format("an integer >= {}", min);
}

}  // namespace

// An integer in [min, min(max, type_max)]. Not an integer, or below an open-ended range: "a
// positive integer"; past a stated `max` or past what the field's type holds: the range.
std::int64_t read_integer(const YAML::Node& node, std::int64_t min, std::int64_t max,
                          std::int64_t type_max) {
  const std::int64_t limit = std::min(max, type_max);
  std::int64_t value = 0;
  const int_parse result =
      is_plain_scalar(node) ? parse_integer(node.Scalar(), value) : int_parse::not_integer;
  if (result == int_parse::ok && value >= min && value <= limit) return value;
  const bool show_range = result == int_parse::out_of_range ||
                          (result == int_parse::ok && (max != k_no_max || value > limit));
  const std::string expected =
      show_range ? fmt::format("an integer in [{}, {}]", min, limit) : integer_kind(min);
  throw value_error(fmt::format("expected {}, got {}", expected, describe(node)));
}

// A number in [min, max], or (min, max] when `min_open`. from_chars, unlike strtod, ignores the
// locale; the character check keeps out "nan", "inf" and hex floats.
double read_number(const YAML::Node& node, double min, double max, bool min_open) {
  const std::string expected = fmt::format("a number in {}{}, {}]", min_open ? '(' : '[', min, max);
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const bool looks_numeric = is_plain_scalar(node) && !text.empty() && text.front() != '+' &&
                             text.find_first_not_of("0123456789-.eE") == std::string_view::npos;
  if (looks_numeric) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool whole = ec == std::errc() && end == text.data() + text.size();
    if (whole && (min_open ? value > min : value >= min) && value <= max) return value;
  }
  throw value_error(fmt::format("expected {}, got {}", expected, describe(node)));
}

// YAML 1.2 core-schema bools only: "yes", "on" and "1" are not bools.
bool read_bool(const YAML::Node& node) {
  if (is_plain_scalar(node)) {
    const std::string& text = node.Scalar();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  throw value_error(fmt::format("expected true or false, got {}", describe(node)));
}

// Any scalar, quoted or not; an empty value is the empty string.
std::string read_string(const YAML::Node& node) {
  if (node.IsNull()) return {};
  if (node.IsScalar()) return node.Scalar();
  throw value_error(fmt::format("expected a string, got {}", describe(node)));
}

std::string read_choice(const YAML::Node& node, const std::vector<std::string>& allowed) {
  if (node.IsScalar()) {
    const auto it = std::find(allowed.begin(), allowed.end(), node.Scalar());
    if (it != allowed.end()) return *it;
  }
  std::string list;
  for (const std::string& choice : allowed) list += (list.empty() ? "" : "|") + choice;
  throw value_error(fmt::format("expected one of {}, got {}", list, describe(node)));
}

std::optional<std::int64_t> read_kv_blocks(const YAML::Node& node) {
  if (node.IsScalar() && node.Scalar() == "auto") return std::nullopt;
  std::int64_t value = 0;
  if (is_plain_scalar(node) && parse_integer(node.Scalar(), value) == int_parse::ok && value > 0) {
    return value;
  }
  throw value_error(fmt::format("expected auto or a positive integer, got {}", describe(node)));
}

namespace {

// A browser origin as it sends it: http:// or https://, a host, maybe a port; no path, no
// trailing slash, no whitespace.
bool is_origin(const std::string& text) {
  std::string_view rest = text;
  if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else {
    return false;
  }
  return !rest.empty() && rest.find_first_of("/?# \t") == std::string_view::npos;
}

}  // namespace

// A list of host:port addresses (cluster.replicas); empty or ~: none.
std::vector<std::string> read_addresses(const YAML::Node& node) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) {
    throw value_error(fmt::format("expected a list of host:port, got {}", describe(node)));
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& entry = node[i];
    const std::string s = entry.IsScalar() ? entry.Scalar() : std::string();
    const std::size_t colon = s.rfind(':');
    const bool ok = colon != std::string::npos && colon > 0 && colon + 1 < s.size() &&
                    s.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                    std::stol(s.substr(colon + 1)) <= 65535;
    if (!ok) {
      throw value_error(
          fmt::format("entry #{}: expected host:port, got {}", i + 1, describe(entry)));
    }
    out.push_back(s);
  }
  return out;
}

// A list of origins for CORS, or ["*"]; empty or ~: none.
std::vector<std::string> read_origins(const YAML::Node& node) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) {
    throw value_error(fmt::format("expected a list of origins (or [\"*\"]), got {}",
                                  describe(node)));
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& entry = node[i];
    const bool ok = entry.IsScalar() && (entry.Scalar() == "*" || is_origin(entry.Scalar()));
    if (!ok) {
      throw value_error(fmt::format(
          "entry #{}: expected \"*\" or an origin like https://app.example:8443 (scheme and "
          "host, no path), got {}",
          i + 1, describe(entry)));
    }
    out.push_back(entry.Scalar());
  }
  return out;
}

}  // namespace courier::config::values
