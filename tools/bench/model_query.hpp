#pragma once
// Asks the server which model it serves (GET /v1/models), to fill --model when it is omitted.
#include <optional>
#include <string>

#include "tools/bench/base_url.hpp"

namespace courier::bench_tool {

// The first model id, or nullopt with `error` saying why (unreachable, HTTP status, no model).
std::optional<std::string> query_model_id(const base_url& url, const std::string& api_key,
                                          double timeout_s, std::string& error);

}  // namespace courier::bench_tool
