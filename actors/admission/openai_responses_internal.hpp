#pragma once
// What openai_responses_response.cpp and openai_responses_stream.cpp share: the stream ends with
// the same response object the whole translation builds, so both build items, usage and the
// response here. Internal to the Responses translator.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/openai_responses.hpp"

namespace courier::admission {

// The stream's items, as both translators name them.
using item = responses_stream::item;
using item_kind = responses_stream::item_kind;

// A function_call item's id: "fc_" + the call id's suffix after "call_" (else the whole id).
std::string call_item_id(const std::string& call_id);

// Content parts: a message's output_text, a reasoning item's reasoning_text.
nlohmann::ordered_json output_text(const std::string& text);
nlohmann::ordered_json reasoning_text(const std::string& text);

// An item as output_item.done and the response have it, or (`added`) as output_item.added.
nlohmann::ordered_json item_json(const item& it, bool added);

// The chat usage as the Responses API's (reasoning_tokens 0: not counted apart).
nlohmann::ordered_json responses_usage(const nlohmann::json& chat_usage);

// The response object: `key` the chat id's suffix, `request` the Responses body (echoed).
nlohmann::ordered_json response_json(const std::string& key, std::int64_t created,
                                     const std::string& model, const std::string& status,
                                     const std::vector<item>& items,
                                     nlohmann::ordered_json usage,
                                     const nlohmann::ordered_json& request);

// The response's (and the last item's) status for a chat finish_reason: length is
// "incomplete", anything else "completed".
const char* response_status(const std::string& finish_reason);

}  // namespace courier::admission
