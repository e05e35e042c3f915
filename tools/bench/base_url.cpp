#include "tools/bench/base_url.hpp"

#include <stdexcept>

namespace courier::bench_tool {

std::string base_url::host_header() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port == "80" ? h : h + ":" + port;
}

base_url parse_base_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::invalid_argument("not an http:// URL: " + url);
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  base_url out;
  out.prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();

  std::string port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8000
    const auto close = authority.find(']');
    if (close == std::string::npos) throw std::invalid_argument("unclosed '[' in " + url);
    out.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') throw std::invalid_argument("bad authority in " + url);
      port = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) throw std::invalid_argument("no host in " + url);
  if (port.empty()) port = "80";
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) > 65535 || std::stoi(port) == 0) {
    throw std::invalid_argument("bad port '" + port + "' in " + url);
  }
  out.port = port;
  return out;
}

}  // namespace courier::bench_tool
