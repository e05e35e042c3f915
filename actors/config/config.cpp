// Loading a config is three steps over one YAML tree: parse the file (or start from an empty
// map), apply each --set override in order, then validate the whole tree once against the
// schema table (config_schema.cpp), which also copies each value into a server_config.
#include "actors/config/config.hpp"

#include "actors/config/config_schema.hpp"
#include "actors/config/config_values.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace courier::config {
namespace {

using namespace values;

constexpr std::size_t k_max_suggestion_distance = 3;

using key_path = std::vector<std::string>;

std::string join(const key_path& path, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count && i < path.size(); ++i) {
    if (i > 0) out += '.';
    out += path[i];
  }
  return out;
}

std::string join(const key_path& path) {
  return join(path, path.size());
}

key_path split(std::string_view dotted) {
  key_path out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    out.emplace_back(dotted.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> config_keys() {
  std::vector<std::string> paths;
  for (const key_spec& key : schema()) paths.push_back(key.path);
  return paths;
}

namespace {

const key_spec* find_key(const std::string& path) {
  for (const key_spec& key : schema()) {
    if (key.path == path) return &key;
  }
  return nullptr;
}

// A section is a proper prefix of some key: "device", "device.sim", ...
bool is_section(const std::string& path) {
  return std::any_of(schema().begin(), schema().end(), [&](const key_spec& key) {
    return key.path.size() > path.size() && key.path.compare(0, path.size(), path) == 0 &&
           key.path[path.size()] == '.';
  });
}

// Whether `path` names a plain value, or lies inside any value (a tenant in server.api_keys):
// either way nothing can be set inside it.
bool below_a_value(const key_path& path) {
  for (std::size_t count = 1; count <= path.size(); ++count) {
    const key_spec* key = find_key(join(path, count));
    if (key != nullptr && (count < path.size() || !key->is_map)) return true;
  }
  return false;
}

std::string unknown_key_message(const std::string& path) {
  if (path == "model.dtype") {  // vLLM's --dtype: people bring it
    return "unknown config key 'model.dtype': weights run in their checkpoint's dtype (bfloat16 "
           "or float16 on cuda, converted to float32 on sim); remove the key";
  }
  std::string best;
  std::size_t best_distance = k_max_suggestion_distance + 1;
  const auto consider = [&](const std::string& candidate) {
    const std::size_t distance = edit_distance(path, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  };
  for (const key_spec& key : schema()) {
    for (std::size_t dot = key.path.find('.'); dot != std::string::npos;
         dot = key.path.find('.', dot + 1)) {
      consider(key.path.substr(0, dot));
    }
    consider(key.path);
  }
  if (best.empty()) return fmt::format("unknown config key '{}'", one_line(path));
  return fmt::format("unknown config key '{}'; did you mean '{}'?", one_line(path), best);
}

// ---- building and validating the tree -------------------------------------------------------

struct applied_override {
  std::string text;               // as given, for messages
  key_path path;                  // the key it set
  std::vector<key_path> created;  // intermediate maps it had to create
};

// Invariants: `root_` is a map; `applied_` lists the overrides applied so far, in order.
class config_builder {
 public:
  config_builder(std::string source, YAML::Node root)
      : source_(std::move(source)), root_(std::move(root)) {}

  void apply_override(const std::string& text);
  server_config validate() const;

 private:
  void walk(const YAML::Node& map, key_path& path, server_config& config) const;
  void read_api_keys(const YAML::Node& node, key_path& path, server_config& config) const;
  void read_key_options(const YAML::Node& value, const YAML::Node& tenant, key_path& path,
                        int number, server_config& config) const;
  void read_adapters(const YAML::Node& node, key_path& path, server_config& config) const;
  void check_cross_keys(const server_config& config) const;
  // The index of the override that last wrote `path` or created it; -1: the file.
  int origin_of(const key_path& path) const;
  [[noreturn]] void fail(int origin, const std::string& message) const;
  [[noreturn]] void fail_at(const key_path& path, const std::string& message) const {
    fail(origin_of(path), message);
  }

  std::string source_;
  YAML::Node root_;
  std::vector<applied_override> applied_;
};

int config_builder::origin_of(const key_path& path) const {
  for (int i = static_cast<int>(applied_.size()) - 1; i >= 0; --i) {
    const applied_override& o = applied_[static_cast<std::size_t>(i)];
    const bool inside =
        o.path.size() <= path.size() && std::equal(o.path.begin(), o.path.end(), path.begin());
    const bool created = std::find(o.created.begin(), o.created.end(), path) != o.created.end();
    if (inside || created) return i;
  }
  return -1;
}

void config_builder::fail(int origin, const std::string& message) const {
  if (origin < 0) throw config_error(fmt::format("{}: {}", source_, message));
  const std::string& text = applied_[static_cast<std::size_t>(origin)].text;
  throw config_error(fmt::format("--set {}: {}", one_line(text), message));
}

void config_builder::apply_override(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    throw config_error(fmt::format("--set {}: {}", one_line(text), why));
  };
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos) bad("expected key.path=value");
  const std::string_view raw_key = std::string_view(text).substr(0, equals);
  const std::size_t first = raw_key.find_first_not_of(" \t");
  if (first == std::string_view::npos) bad("expected key.path=value, and the key is empty");
  const std::string_view key = raw_key.substr(first, raw_key.find_last_not_of(" \t") + 1 - first);
  const key_path path = split(key);
  if (std::find(path.begin(), path.end(), "") != path.end()) {
    bad(fmt::format("the key '{}' has an empty part", one_line(key)));
  }

  YAML::Node value;
  try {
    value.reset(YAML::Load(text.substr(equals + 1)));
  } catch (const YAML::Exception& e) {
    bad(fmt::format("the value is not valid YAML: {}", e.msg));
  }

  applied_override record{text, path, {}};
  YAML::Node map = root_;
  for (std::size_t depth = 1; depth < path.size(); ++depth) {
    const key_path prefix(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(depth));
    // A const lookup: a missing key must not be added to the tree as a side effect.
    const YAML::Node found = static_cast<const YAML::Node&>(map)[path[depth - 1]];
    YAML::Node child(YAML::NodeType::Map);
    if (!found.IsDefined() || found.IsNull()) {
      map[path[depth - 1]] = child;
      record.created.push_back(prefix);
    } else if (found.IsMap()) {
      child.reset(found);  // rebinds; `=` would write through into the new map
    } else {
      const std::string prefix_text = join(prefix);
      const key_spec* leaf = find_key(prefix_text);
      if (is_section(prefix_text) || (leaf != nullptr && leaf->is_map)) {
        fail_at(prefix, fmt::format("{}: expected a map, got {}", prefix_text, describe(found)));
      }
      if (below_a_value(prefix)) bad(unknown_key_message(join(path)));
      fail_at(prefix, unknown_key_message(prefix_text));  // the file's or an earlier override's
    }
    map.reset(child);
  }
  map[path.back()] = value;
  applied_.push_back(std::move(record));
}

server_config config_builder::validate() const {
  server_config config;
  key_path path;
  walk(root_, path, config);
  check_cross_keys(config);
  // Caches hold tenants' data: with API keys, they are per tenant unless the config says
  // `none` itself (the runtime warns then).
  config.scheduler.cache_isolation = cache_isolation_of(config);
  return config;
}


void config_builder::walk(const YAML::Node& map, key_path& path, server_config& config) const {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) {
      fail_at(path,
              fmt::format("expected config key names in '{}', got {}",
                          path.empty() ? "the top level" : join(path), describe(entry.first)));
    }
    path.push_back(entry.first.Scalar());
    const std::string dotted = join(path);
    if (!seen.insert(entry.first.Scalar()).second) {
      fail_at(path, fmt::format("duplicate config key '{}'", one_line(dotted)));
    }
    const YAML::Node& value = entry.second;
    if (const key_spec* key = find_key(dotted)) {
      try {
        if (key->is_map && dotted == "lora.adapters") {
          read_adapters(value, path, config);
        } else if (key->is_map) {
          read_api_keys(value, path, config);
        } else {
          key->apply(value, config);
        }
      } catch (const value_error& e) {
        fail_at(path, fmt::format("{}: {}", dotted, e.what()));
      }
    } else if (is_section(dotted)) {
      if (value.IsMap()) {
        walk(value, path, config);
      } else if (!value.IsNull()) {
        fail_at(path, fmt::format("{}: expected a map, got {}", dotted, describe(value)));
      }
    } else {
      fail_at(path, unknown_key_message(dotted));
    }
    path.pop_back();
  }
}

// Messages number the entries rather than quote them: an API key is a secret.
void config_builder::read_api_keys(const YAML::Node& node, key_path& path,
                                   server_config& config) const {
  std::map<std::string, std::string> keys;
  config.server.tenant_models.clear();
  config.server.admin_tenants.clear();
  if (node.IsNull()) {
    config.server.api_keys = keys;
    return;
  }
  const std::string dotted = join(path);
  if (!node.IsMap()) {
    throw value_error(fmt::format("expected a map of API key to tenant, got {}", describe(node)));
  }
  int number = 0;
  for (const auto& entry : node) {
    ++number;
    const bool key_ok = entry.first.IsScalar() && !entry.first.Scalar().empty();
    if (!key_ok) {
      fail_at(path,
              fmt::format("{}: expected a non-empty string as API key #{}, got {}", dotted, number,
                          entry.first.IsScalar() ? "an empty one" : describe(entry.first)));
    }
    path.push_back(entry.first.Scalar());
    // An entry is the tenant, or {tenant: T, models: [names]} restricting T to those models.
    // (A YAML::Node assigned to writes the node it refers to: bind once.)
    const YAML::Node& value = entry.second;
    const YAML::Node tenant = value.IsMap() ? value["tenant"] : value;
    if (value.IsMap()) read_key_options(value, tenant, path, number, config);
    const bool tenant_ok = tenant && tenant.IsScalar() && !tenant.Scalar().empty();
    if (!tenant_ok) {
      fail_at(path, fmt::format("{}: expected a non-empty tenant for API key #{}, got {}", dotted,
                                number, describe(entry.second)));
    }
    if (!keys.emplace(entry.first.Scalar(), tenant.Scalar()).second) {
      fail_at(path, fmt::format("{}: API key #{} repeats an earlier key", dotted, number));
    }
    path.pop_back();
  }
  config.server.api_keys = std::move(keys);
}

// An API key's map form, {tenant: T, models: [names], admin: B}: its fields checked, T's
// models list (one per tenant) and admin flag recorded.
void config_builder::read_key_options(const YAML::Node& value, const YAML::Node& tenant,
                                      key_path& path, int number, server_config& config) const {
  const std::string dotted = join(path, path.size() - 1);
    for (const auto& field : value) {
      const std::string f = field.first.IsScalar() ? field.first.Scalar() : "";
      if (f != "tenant" && f != "models" && f != "admin") {
        fail_at(path, fmt::format("{}: API key #{}: unknown field '{}' (tenant, models, admin)",
                                  dotted, number, one_line(f)));
      }
    }
    const YAML::Node admin = value["admin"];
    if (admin) {
      if (!admin.IsScalar() || (admin.Scalar() != "true" && admin.Scalar() != "false")) {
        fail_at(path, fmt::format("{}: API key #{}: admin: expected true or false, got {}",
                                  dotted, number, describe(admin)));
      }
      if (admin.Scalar() == "true" && value["tenant"] && value["tenant"].IsScalar()) {
        config.server.admin_tenants.insert(value["tenant"].Scalar());
      }
    }
    const YAML::Node models = value["models"];
    std::vector<std::string> names;
    if (models) {
      if (!models.IsSequence()) {
        fail_at(path, fmt::format("{}: API key #{}: models: expected a list of model names, "
                                  "got {}", dotted, number, describe(models)));
      }
      for (const auto& m : models) {
        if (!m.IsScalar() || m.Scalar().empty()) {
          fail_at(path, fmt::format("{}: API key #{}: models: expected model names, got {}",
                                    dotted, number, describe(m)));
        }
        names.push_back(m.Scalar());
      }
      std::sort(names.begin(), names.end());
      const std::string t = tenant && tenant.IsScalar() ? tenant.Scalar() : "";
      const auto [it, added] = config.server.tenant_models.emplace(t, names);
      if (!added && it->second != names) {
        fail_at(path, fmt::format("{}: API key #{}: tenant '{}' has another models list in "
                                  "an earlier key (the list is per tenant)",
                                  dotted, number, one_line(t)));
      }
    }
}

// lora.adapters: a map of adapter name (a request's `model`) to its PEFT folder.
void config_builder::read_adapters(const YAML::Node& node, key_path& path,
                                   server_config& config) const {
  std::map<std::string, std::string> adapters;
  const std::string dotted = join(path);
  if (!node.IsNull() && !node.IsMap()) {
    throw value_error(
        fmt::format("expected a map of adapter name to PEFT folder, got {}", describe(node)));
  }
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
        fail_at(path, fmt::format("{}: expected adapter names, got {}", dotted,
                                  describe(entry.first)));
      }
      path.push_back(entry.first.Scalar());
      if (!entry.second.IsScalar() || entry.second.Scalar().empty()) {
        fail_at(path, fmt::format("{}: expected a folder, got {}", join(path),
                                  describe(entry.second)));
      }
      if (!adapters.emplace(entry.first.Scalar(), entry.second.Scalar()).second) {
        fail_at(path, fmt::format("{}: adapter '{}' is given twice", dotted,
                                  one_line(entry.first.Scalar())));
      }
      path.pop_back();
    }
  }
  config.lora.adapters = std::move(adapters);
}

void config_builder::check_cross_keys(const server_config& config) const {
  const prompt_lookup_section& lookup = config.speculative.prompt_lookup;
  if (lookup.max_ngram < lookup.min_ngram) {
    const int origin = std::max(origin_of(split("speculative.prompt_lookup.max_ngram")),
                                origin_of(split("speculative.prompt_lookup.min_ngram")));
    fail(origin, fmt::format("speculative.prompt_lookup.max_ngram: expected at least "
                             "speculative.prompt_lookup.min_ngram ({}), got '{}'",
                             lookup.min_ngram, lookup.max_ngram));
  }
  const cache_section& cache = config.cache;
  if (cache.disk_tier_gb > 0 && cache.disk_tier_path.empty()) {
    fail(origin_of(split("cache.disk_tier_gb")),
         "cache.disk_tier_path: a folder for the disk tier is needed when cache.disk_tier_gb is "
         "set");
  }
  if (cache.disk_tier_gb > 0 && cache.host_tier_mb == 0) {
    fail(origin_of(split("cache.disk_tier_gb")),
         "cache.host_tier_mb: the disk tier sits behind the host tier (blocks go to disk from "
         "host memory and come back through it): set cache.host_tier_mb too");
  }
}

YAML::Node load_tree(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) throw config_error(fmt::format("{}: YAML error: {}", source, e.msg));
    throw config_error(fmt::format("{}: YAML syntax error at line {}, column {}: {}", source,
                                   e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (root.IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw config_error(fmt::format("{}: expected a map of config sections at the top level, got {}",
                                   source, describe(root)));
  }
  return root;
}

}  // namespace

server_config parse_config(const std::string& yaml_text, const std::string& source,
                           const std::vector<std::string>& overrides) {
  config_builder builder(source, load_tree(yaml_text, source));
  for (const std::string& text : overrides) builder.apply_override(text);
  return builder.validate();
}

server_config load_config(const std::string& yaml_path, const std::vector<std::string>& overrides) {
  if (yaml_path.empty()) return parse_config("", "(no config file)", overrides);
  std::error_code ec;
  if (std::filesystem::is_directory(yaml_path, ec)) {
    throw config_error(
        fmt::format("{}: cannot read the config file: it is a directory", yaml_path));
  }
  std::ifstream in(yaml_path, std::ios::binary);
  if (!in) {
    throw config_error(
        fmt::format("{}: cannot read the config file: {}", yaml_path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw config_error(fmt::format("{}: cannot read the config file", yaml_path));
  return parse_config(text.str(), yaml_path, overrides);
}

std::string cache_isolation_of(const server_config& c) {
  if (c.scheduler.cache_isolation != "auto") return c.scheduler.cache_isolation;
  return c.server.api_keys.empty() ? "none" : "tenant";
}

}  // namespace courier::config
