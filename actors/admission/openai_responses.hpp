#pragma once
// OpenAI's Responses API (`POST /v1/responses`), served through the chat-completions path: the
// request becomes a chat-completions body, and the chat response (whole, or its stream chunks)
// becomes a response object (or its typed SSE events). Pure JSON: no actors, no I/O. What the
// server keeps (`store`, response_store.hpp) comes in through `stored_responses`: a follow-up's
// conversation is `previous_response_id`'s (its input items, then its output) followed by its
// own input, and an `item_reference` is the kept item it names. `conversation`, a stored
// `prompt` and `background: true` are a 400 (nothing could fetch a background response).
//
// Request (responses_to_chat_request):
// - `instructions` is a leading system message (a previous response's are not carried over, as
//   OpenAI does); `input` a string (one user message) or items:
//   messages (role user, system, developer = system, assistant; content a string or
//   input_text / output_text / refusal parts), `function_call` (an assistant's tool call; the
//   calls that follow an assistant message or each other join that one message, as one turn),
//   `function_call_output` (a tool message), `reasoning` (dropped); input_image, input_file
//   and input_audio parts are a 400 ("this model takes text only"), other item types a 400;
// - function tools only (another tool type is a 400 naming it); `tool_choice` a string or
//   {"type": "function", "name"}; `text.format` is `response_format`; `max_output_tokens` is
//   `max_tokens`; `temperature`, `top_p`, `parallel_tool_calls` pass through; `stream` adds
//   `stream_options.include_usage`; `reasoning`, `metadata`, `truncation`, `include`, `user`
//   and fields courier does not know are dropped.
//
// Response: ids derive from the chat's (`chatcmpl-X` -> `resp_X`, the message item `msg_X`,
// the reasoning item `rs_X`; a call keeps its `call_id`, its item is `fc_` + the call id's
// suffix after `call_`), the same whole or streamed. Items come in the order reasoning,
// message, function calls (the stream: in the order the chunks bring them). finish_reason
// length: status "incomplete" (reason max_output_tokens) and the last item "incomplete"; any
// other: "completed". The request's tools, tool_choice, text, temperature, top_p,
// max_output_tokens, instructions, parallel_tool_calls, previous_response_id, store (false
// when absent) and metadata are echoed (the API's defaults when absent); reasoning_tokens is 0
// (not counted apart).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/api_error.hpp"

namespace courier::admission {

// What a body may refer to that the server kept for its tenant (response_store.hpp): by id, the
// conversation a follow-up of a response continues, and an output item. nullopt: nothing kept
// under that id (never stored, expired, removed, or another tenant's).
struct stored_responses {
  std::function<std::optional<nlohmann::ordered_json>(const std::string& response_id)> continued;
  std::function<std::optional<nlohmann::ordered_json>(const std::string& item_id)> item;
};

// The items a body's answer continues: previous_response_id's conversation (`continued` items),
// then `input` (a string as one user message item), each item_reference replaced by the item it
// names. Throws api_error 400 naming the field: an id nothing is kept under, or (`stored` null:
// the server keeps nothing) any previous_response_id or item_reference.
struct responses_input {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  std::size_t continued = 0;  // the first items, previous_response_id's
};
responses_input responses_conversation(const nlohmann::ordered_json& body,
                                       const stored_responses* stored);

// A chat-completions body (keys in the client's order inside schemas) answering `input`
// (responses_conversation's) with the body's other fields. Throws api_error 400 naming the field
// (e.g. "input[2].content[0]").
nlohmann::ordered_json responses_to_chat_request(const nlohmann::ordered_json& body,
                                                 const responses_input& input);
// The same for a body that refers to nothing kept.
nlohmann::ordered_json responses_to_chat_request(const nlohmann::ordered_json& body);

// A whole chat.completion (one choice) as a response object; `request` is the Responses body
// (the echoed fields).
nlohmann::ordered_json chat_to_responses_response(const nlohmann::json& chat_response,
                                                  const nlohmann::ordered_json& request);

// One streamed response: chat chunks in, SSE text out ("event: T\ndata: {...}\n\n", every
// event with its "type" and a "sequence_number" counting from 0). response.created and
// response.in_progress go out with the first call; each item is added, streamed, and done when
// another begins or the choice finishes; response.completed (or response.incomplete) with the
// whole response, equal to chat_to_responses_response's for the same output, only at finish(),
// so the chat stream's usage chunk (include_usage) is in. An error chunk becomes one `error`
// event and ends the stream: nothing is written after it.
// Invariants: only the last item can be open; every item added is done before response.completed
// (or response.incomplete).
class responses_stream {
 public:
  // chat_id, created, model: the chat response's; request: the Responses body (echoed).
  responses_stream(const std::string& chat_id, std::int64_t created, std::string model,
                   nlohmann::ordered_json request);

  std::string on_chunk(const nlohmann::json& chat_chunk);
  std::string finish();
  // The response object response.completed (or response.incomplete) carried; nullopt before
  // finish() and after an error.
  const std::optional<nlohmann::ordered_json>& completed() const { return completed_; }

  // An output item as it is streamed and then echoed in the whole response (public: the
  // whole-response translation builds the same items).
  enum class item_kind { reasoning, message, function_call };
  struct item {
    item_kind kind;
    std::string id;
    std::string text;                  // the reasoning, the message text or the call's arguments
    std::string call_id, name;         // function calls
    std::string status = "completed";  // messages and calls, once done
  };

 private:
  std::string event(nlohmann::ordered_json e);
  void start(std::string& out);
  void open(item it, std::string& out);
  void close(const char* status, std::string& out);
  nlohmann::ordered_json response(const std::string& status) const;

  std::string key_;  // the chat id's suffix
  std::int64_t created_;
  std::string model_;
  nlohmann::ordered_json request_;
  std::int64_t sequence_ = 0;
  bool started_ = false;
  bool ended_ = false;
  bool open_ = false;  // items_.back() is still streaming
  std::vector<item> items_;
  std::map<std::int64_t, std::size_t> calls_;  // chat tool-call index -> items_ index
  std::string finish_reason_;
  nlohmann::json usage_;  // the chat usage, once its chunk came
  std::optional<nlohmann::ordered_json> completed_;
};

}  // namespace courier::admission
