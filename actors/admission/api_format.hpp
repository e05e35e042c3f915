#pragma once
// The three APIs a generation request may come in: OpenAI's chat and completions, Anthropic's
// Messages (/v1/messages) and OpenAI's Responses (/v1/responses). The last two are served by the
// chat-completions path: their body is translated into a chat body on the way in, and the chat
// response (whole, or chunk by chunk) and errors on the way out (anthropic_messages.hpp,
// openai_responses.hpp). format_writer is that way out, one per response.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "actors/admission/anthropic_messages.hpp"
#include "actors/admission/api_error.hpp"
#include "actors/admission/openai_functions.hpp"
#include "actors/admission/openai_responses.hpp"
#include "actors/admission/response_store.hpp"

namespace courier::admission {

// openai_functions: chat completions in OpenAI's legacy functions form (openai_functions.hpp),
// found in the body by chat_body_of.
enum class api_format : std::uint8_t { openai, anthropic, responses, openai_functions };

// What the way out needs of the client's own body: the body itself (a Responses object echoes
// its fields) and, for a Responses request whose answer is stored, where the finished response
// object goes (response_store::keep with the tenant and the conversation it answered).
struct client_body {
  nlohmann::ordered_json original;
  std::function<void(const nlohmann::ordered_json& response)> keep;  // empty: nothing kept
};

// The chat-completions body of an Anthropic or Responses body (`client` keeps the body itself);
// an OpenAI body as it is, unless it is a chat body (`chat`) in the legacy functions form: then
// its tools form, and `f` becomes openai_functions. A Responses body refers to, and is kept in,
// `store` under `tenant` (null: nothing is kept; its `store` echoes false). Throws api_error.
std::string chat_body_of(api_format& f, bool chat, const std::string& body, int max_json_depth,
                         const std::shared_ptr<response_store>& store, const std::string& tenant,
                         client_body& client);

// The name the client's API gives a field of the translated chat body (an error there names
// what the client sent: Anthropic's `output_config.format.schema` for chat's
// `response_format.json_schema.schema`, Responses' `max_output_tokens` for `max_tokens`, ...);
// the field itself where the names agree.
std::string client_field(api_format f, const std::string& param);

// An error's body in the format's shape (OpenAI's for openai and responses), naming the field
// as the client's API does (client_field). Anthropic's carries the request's id (`request_id`,
// as Anthropic's API does) when one is given.
nlohmann::json error_body(api_format f, const api_error& e, const std::string& request_id = {});

class format_writer {
 public:
  // id, created, model: the chat response's; prompt_tokens: Anthropic's message_start count.
  // A Responses object, once whole (whole(), or end() of a stream that ended without an
  // error), goes to client.keep.
  format_writer(api_format f, const std::string& id, std::int64_t created, const std::string& model,
                std::int64_t prompt_tokens, client_body client);

  // The SSE text of one chat stream chunk (or of an {"error": ...} chunk).
  std::string chunk(const nlohmann::json& chat_chunk);
  // What ends the stream: "data: [DONE]" for OpenAI, the closing events otherwise.
  std::string end(const std::optional<std::string>& matched_stop = {});
  // A whole chat response in the format's shape, as the body to send.
  std::string whole(const nlohmann::json& chat_response,
                    const std::optional<std::string>& matched_stop = {}) const;

 private:
  api_format format_;
  client_body client_;
  std::optional<anthropic_stream> anthropic_;
  std::optional<responses_stream> responses_;
};

}  // namespace courier::admission
