#pragma once
// --base-url http://HOST[:PORT][/PREFIX] split into what a TCP connect and an HTTP target need.
#include <string>

namespace courier::bench_tool {

struct base_url {
  std::string host;    // a name, an IPv4 address, or an IPv6 address without brackets
  std::string port;    // "80" when the URL has none
  std::string prefix;  // path before the endpoint, without a trailing '/'; may be empty

  std::string host_header() const;  // HOST[:PORT] as the Host header wants it
  std::string target(const std::string& endpoint) const { return prefix + endpoint; }
};

// Throws std::invalid_argument on a URL that is not http://, or has an empty host or a bad
// port. As vLLM's, the base URL is the server root: the endpoint carries "/v1", so
// http://h:8000/v1 with /v1/completions asks for /v1/v1/completions.
base_url parse_base_url(const std::string& url);

}  // namespace courier::bench_tool
