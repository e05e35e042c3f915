// The keys table and configs/default.yaml, generated from the schema (config_schema.hpp), so
// that neither can differ from what the server reads.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "actors/config/config.hpp"
#include "actors/config/config_schema.hpp"

namespace courier::config {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

// The value an override of bundled_model_overrides() sets for `path`, if any.
const std::string* overridden(const std::string& path) {
  for (const std::string& o : bundled_model_overrides()) {
    if (o.compare(0, path.size() + 1, path + "=") == 0) return &o;
  }
  return nullptr;
}

// A Markdown table cell: its pipes escaped.
std::string escape_pipes(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

constexpr std::size_t comment_column = 39;

// "  key: value" padded to the comment column, then "# brief".
std::string yaml_line(std::size_t depth, const std::string& name, const std::string& value,
                      const std::string& brief) {
  if (value.empty()) return std::string(2 * depth, ' ') + name + ":\n";  // a section
  std::string line = std::string(2 * depth, ' ') + name + ": " + value;
  if (brief.empty()) return line + "\n";
  line.resize(std::max(line.size() + 1, comment_column), ' ');
  return line + "# " + brief + "\n";
}

// The config's defaults (its structs' initializers, `auto` values unresolved), with the bundled
// model's overrides when `bundled`.
server_config defaults(bool bundled) {
  server_config c;
  if (!bundled) return c;
  for (const std::string& o : bundled_model_overrides()) {
    const std::size_t eq = o.find('=');
    for (const key_spec& key : schema()) {
      if (key.path == o.substr(0, eq)) key.apply(YAML::Load(o.substr(eq + 1)), c);
    }
  }
  return c;
}

}  // namespace

const std::vector<std::string>& bundled_model_overrides() {
  static const std::vector<std::string> overrides = {
      "model.path=tests/data/models/tiny-qwen3", "model.served_name=tiny-qwen3",
      "device.backend=sim", "scheduler.max_num_seqs=64", "scheduler.max_batched_tokens=512"};
  return overrides;
}

std::string config_keys_markdown() {
  const server_config config = defaults(false);
  std::string out =
      "# courier's config keys\n\n"
      "Generated from `actors/config/config_schema.cpp` by `scripts/gen-config-docs.sh`: do not "
      "edit.\nHow a config is loaded, its types and its errors: `actors/config/README.md`.\n\n"
      "| key | type | default | allowed |\n| --- | --- | --- | --- |\n";
  for (const key_spec& key : schema()) {
    std::string allowed = key.range;
    if (!key.docs.help.empty()) allowed += (allowed.empty() ? "" : "; ") + key.docs.help;
    out += fmt::format("| `{}` | {} | `{}` | {} |\n", key.path, escape_pipes(key.type),
                       escape_pipes(key.show(config)), escape_pipes(allowed));
  }
  return out + "\nInt fields stored as `int32_t` also reject values past 2147483647.\n";
}

std::string default_config_yaml() {
  const server_config config = defaults(true);
  const server_config plain = defaults(false);
  std::string out =
      "# courier's default config: the bundled tiny model on the simulated GPU. Run from the repo\n"
      "# root (relative paths are relative to the current directory). Generated from the schema\n"
      "# (scripts/gen-config-docs.sh); every key, at its default unless its comment says\n"
      "# otherwise. Every key: docs/config-keys.md.\n";
  std::vector<std::string> open;  // the sections of the line before
  for (const key_spec& key : schema()) {
    std::vector<std::string> parts = split_path(key.path);
    const std::string name = parts.back();
    parts.pop_back();
    std::size_t same = 0;
    while (same < open.size() && same < parts.size() && open[same] == parts[same]) ++same;
    if (same == 0 && !parts.empty()) out += "\n";
    for (std::size_t d = same; d < parts.size(); ++d) out += yaml_line(d, parts[d], "", "");
    open = parts;
    std::string brief = key.docs.brief;
    if (overridden(key.path)) brief += "; default: " + key.show(plain);
    out += yaml_line(parts.size(), name, key.show(config), brief);
  }
  return out;
}

}  // namespace courier::config
