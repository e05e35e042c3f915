#pragma once
// Reads the Prometheus text exposition format for tests: the value of a sample by metric name
// and a subset of its labels. Written from the format's specification, not from our renderer.
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace courier::test {

struct prom_sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

inline std::vector<prom_sample> parse_prometheus(const std::string& text) {
  std::vector<prom_sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    prom_sample s;
    std::size_t i = line.find_first_of("{ ");
    s.name = line.substr(0, i);
    if (i != std::string::npos && line[i] == '{') {
      ++i;
      while (line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        const std::string key = line.substr(i, eq - i);
        std::size_t j = eq + 2;  // past ="
        std::string v;
        for (; line[j] != '"'; ++j) {
          if (line[j] == '\\') ++j;
          v += line[j];
        }
        s.labels[key] = v;
        i = j + 1;
        if (line[i] == ',') ++i;
      }
      ++i;
    }
    s.value = std::stod(line.substr(line.find_first_not_of(' ', i)));
    out.push_back(std::move(s));
  }
  return out;
}

// The one sample with this name whose labels include `labels`; throws when there is not
// exactly one.
inline double prom_value(const std::vector<prom_sample>& samples, const std::string& name,
                         const std::map<std::string, std::string>& labels = {}) {
  const prom_sample* found = nullptr;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (!match) continue;
    if (found) throw std::runtime_error("more than one sample matches " + name);
    found = &s;
  }
  if (!found) throw std::runtime_error("no sample " + name);
  return found->value;
}

}  // namespace courier::test
