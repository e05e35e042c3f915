#include "actors/cli/args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace courier::cli {

args::args(int argc, char** argv, int first, const std::vector<std::string>& flags,
           const std::vector<std::string>& switches) {
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw usage_error("unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (is(switches, name) && !inline_value) {
      switches_[name] = true;
      continue;
    }
    if (name != "set" && !is(flags, name)) throw usage_error("unknown option '--" + name + "'");
    if (!inline_value) {
      if (i + 1 >= argc) throw usage_error("option '--" + name + "' needs a value");
      value = argv[++i];
    }
    if (name == "set") {
      sets_.push_back(value);
    } else {
      values_[name] = value;
    }
  }
}

std::optional<std::string> args::get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string args::get_or(const std::string& flag, const std::string& fallback) const {
  return get(flag).value_or(fallback);
}

std::optional<long long> args::get_int(const std::string& flag) const {
  auto v = get(flag);
  if (!v) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0) {
    throw usage_error("--" + flag + ": expected an integer, got '" + *v + "'");
  }
  return x;
}

std::optional<double> args::get_double(const std::string& flag) const {
  auto v = get(flag);
  if (!v) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || errno != 0) {
    throw usage_error("--" + flag + ": expected a number, got '" + *v + "'");
  }
  return x;
}

std::vector<std::string> config_sets(const args& a, const std::optional<std::string>& model_path) {
  std::vector<std::string> sets;
  if (auto b = a.get("backend")) sets.push_back("device.backend=" + *b);
  if (model_path) sets.push_back("model.path=" + *model_path);
  sets.insert(sets.end(), a.sets().begin(), a.sets().end());
  return sets;
}

std::vector<unsigned> parse_id_list(const std::string& text, const std::string& what) {
  std::vector<unsigned> ids;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t comma = std::min(text.find(',', i), text.size());
    const std::string part = text.substr(i, comma - i);
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno != 0 || part[0] == '-' || v > 0xffffffffUL) {
      throw usage_error(what + ": expected comma-separated token ids, got '" + text + "'");
    }
    ids.push_back(static_cast<unsigned>(v));
    i = comma + 1;
  }
  return ids;
}

}  // namespace courier::cli
