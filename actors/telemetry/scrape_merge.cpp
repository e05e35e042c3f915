#include "actors/telemetry/scrape_merge.hpp"

#include <map>
#include <sstream>

namespace courier::telemetry {

std::string with_label(const std::string& sample, const std::string& label) {
  if (label.empty()) return sample;
  const std::size_t brace = sample.find('{');
  const std::size_t space = sample.find(' ');
  if (brace != std::string::npos && (space == std::string::npos || brace < space)) {
    const bool empty = brace + 1 < sample.size() && sample[brace + 1] == '}';
    return sample.substr(0, brace + 1) + label + (empty ? "" : ",") + sample.substr(brace + 1);
  }
  if (space == std::string::npos) return sample;  // not a sample
  return sample.substr(0, space) + "{" + label + "}" + sample.substr(space);
}

namespace {

struct family {
  std::string help, type;  // their lines, the first part's
  std::vector<std::string> samples;
};

// The family a "# HELP name ..." or "# TYPE name ..." line names.
std::string named(const std::string& line) {
  const std::size_t begin = 7;  // after "# HELP " / "# TYPE "
  const std::size_t end = line.find(' ', begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

std::string merge_scrapes(const std::vector<labelled_scrape>& parts) {
  std::vector<std::string> order;
  std::map<std::string, family> families;
  auto at = [&](const std::string& name) -> family& {
    auto it = families.find(name);
    if (it == families.end()) {
      order.push_back(name);
      it = families.emplace(name, family{}).first;
    }
    return it->second;
  };
  for (const labelled_scrape& p : parts) {
    std::istringstream in(p.text);
    std::string line, current;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const bool help = line.rfind("# HELP ", 0) == 0, type = line.rfind("# TYPE ", 0) == 0;
      if (help || type) {
        current = named(line);
        family& f = at(current);
        std::string& kept = help ? f.help : f.type;
        if (kept.empty()) kept = line;
        continue;
      }
      if (line[0] == '#') continue;  // other comments
      // A sample before any TYPE (untyped): a family of its own name.
      if (current.empty()) current = line.substr(0, line.find_first_of("{ "));
      at(current).samples.push_back(with_label(line, p.label));
    }
  }
  std::string out;
  for (const std::string& name : order) {
    const family& f = families.at(name);
    if (!f.help.empty()) out += f.help + "\n";
    if (!f.type.empty()) out += f.type + "\n";
    for (const std::string& s : f.samples) out += s + "\n";
  }
  return out;
}

}  // namespace courier::telemetry
