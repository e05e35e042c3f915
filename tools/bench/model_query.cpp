#include "tools/bench/model_query.hpp"

#include <fmt/format.h>

#include "tools/bench/http_exchange.hpp"
#include "tools/bench/openai_stream.hpp"

namespace courier::bench_tool {

std::optional<std::string> query_model_id(const base_url& url, const std::string& api_key,
                                          double timeout_s, std::string& error) {
  const endpoint_list endpoints = resolve_endpoints(url.host, url.port, error);
  if (endpoints.empty()) return std::nullopt;
  boost::asio::io_context io;
  http_call call;
  call.method = "GET";
  call.target = url.target("/v1/models");
  call.host_header = url.host_header();
  call.api_key = api_key;
  call.timeout_s = timeout_s;
  int status = 0;
  std::string body;
  std::string transport_error;
  http_handlers h;
  h.on_status = [&](int s) { status = s; };
  h.on_body = [&](std::string_view bytes) { body.append(bytes); };
  h.on_done = [&](const std::string& e) { transport_error = e; };
  start_http_call(io, endpoints, std::move(call), std::move(h));
  io.run();

  const std::string what = "GET " + url.target("/v1/models");
  if (status != 0 && status != 200) {
    error = fmt::format("{}: HTTP {}: {}", what, status, error_message(body));
  } else if (!transport_error.empty()) {
    error = fmt::format("{}: {}", what, transport_error);
  } else if (auto id = first_model_id(body)) {
    return id;
  } else {
    error = what + ": no model in the answer";
  }
  return std::nullopt;
}

}  // namespace courier::bench_tool
