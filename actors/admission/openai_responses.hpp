#pragma once
// OpenAI's Responses API (`POST /v1/responses`), stateless, served through the chat-completions
// path: the request becomes a chat-completions body, and the chat response (whole, or its
// stream chunks) becomes a response object (or its typed SSE events). Pure JSON: no actors,
// no I/O. Nothing is stored, so whatever refers to an earlier response, conversation, item or
// stored prompt (`previous_response_id`, `conversation`, `item_reference`, `prompt`,
// `background: true`) is a 400; `store` is accepted and nothing is kept.
//
// Request (responses_to_chat_request):
// - `instructions` is a leading system message; `input` a string (one user message) or items:
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
// max_output_tokens, instructions, parallel_tool_calls and metadata are echoed (the API's
// defaults when absent); reasoning_tokens is 0 (not counted apart).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/api_error.hpp"

namespace courier::admission {

// A chat-completions body (keys in the client's order inside schemas). Throws api_error 400
// naming the field (e.g. "input[2].content[0]").
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
};

}  // namespace courier::admission
