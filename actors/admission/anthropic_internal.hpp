#pragma once
// What anthropic_response.cpp and anthropic_stream.cpp share: the whole response and the stream
// must name ids, stop reasons, usage and errors alike. Internal to the Anthropic translator.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace courier::admission {

// A chat tool call's id as a tool_use block's: "call_Y" -> "toolu_Y", any other as it is.
std::string tool_use_id(const std::string& call_id);

// The chat usage as Anthropic's: input_tokens are the prompt tokens not read from the cache.
nlohmann::ordered_json anthropic_usage(const nlohmann::json& chat_usage);

// The chat finish_reason as Anthropic's stop_reason.
std::string stop_reason(const std::string& finish, bool has_calls, bool matched_stop);

// The stop string when `reason` is stop_sequence, else null.
nlohmann::ordered_json stop_sequence(const std::string& reason,
                                     const std::optional<std::string>& matched);

// Anthropic's error type for an HTTP status.
const char* error_type(int status);

}  // namespace courier::admission
