#pragma once
// Reading one YAML value by the config's rules (README.md, "Keys"): what each type accepts, and
// errors that say what was expected and what came ("got ..."), never where: the config builder
// (config.cpp) adds the file or the override.
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace courier::config::values {

constexpr std::int64_t k_no_max = std::numeric_limits<std::int64_t>::max();

// A bad value, without saying where it came from.
class value_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One line, bounded: newlines and control characters escaped, long values cut.
std::string one_line(std::string_view text);
// A plain scalar is unquoted and untagged: the only kind YAML resolves to a number or a bool.
bool is_plain_scalar(const YAML::Node& node);
// What a value was, for "got ..." in messages.
std::string describe(const YAML::Node& node);

// Each throws value_error when the node is not what it reads.
std::int64_t read_integer(const YAML::Node& node, std::int64_t min, std::int64_t max,
                          std::int64_t type_max);
double read_number(const YAML::Node& node, double min, double max, bool min_open);
bool read_bool(const YAML::Node& node);
std::string read_string(const YAML::Node& node);
std::string read_choice(const YAML::Node& node, const std::vector<std::string>& allowed);
std::optional<std::int64_t> read_kv_blocks(const YAML::Node& node);  // an integer or auto
std::vector<std::string> read_addresses(const YAML::Node& node);      // host:port list
std::vector<std::string> read_origins(const YAML::Node& node);        // CORS origins, or "*"

}  // namespace courier::config::values
