#pragma once
// Anthropic's Messages API (`POST /v1/messages`) served through the chat-completions path: the
// request becomes a chat-completions body, and the chat response (whole, or its stream chunks)
// becomes Anthropic's message (or its typed SSE events). Pure JSON: no actors, no I/O.
//
// Request (anthropic_to_chat_request):
// - `system` (a string or text blocks) is a leading system message; `max_tokens` (required,
//   >= 1), `temperature`, `top_p`, `top_k` pass through; `stop_sequences` is `stop`; `stream`
//   adds `stream_options.include_usage`; `metadata`, `thinking` and fields courier does not
//   know are dropped;
// - an assistant's `tool_use` blocks are its `tool_calls` (arguments: `input` as JSON text),
//   its text blocks its content (null without any), its thinking blocks are dropped;
// - a user message's `tool_result` blocks are `tool` messages where they stand; the text
//   blocks before, between and after them are user messages of their own, in order;
//   `is_error` is checked and dropped (chat messages have no such flag);
// - image and document blocks are a 400 ("this model takes text only"); any other block
//   type, and server tools (a tool `type` other than `custom`), are a 400 naming the field;
// - tool_choice: auto -> "auto", any -> "required", tool -> the named function, none -> "none";
//   `disable_parallel_tool_use` -> `parallel_tool_calls` = its negation;
// - structured outputs: `output_config.format` (or the beta's top-level `output_format`, not
//   both) `{"type": "json_schema", "schema": S}` -> `response_format` json_schema S, strict;
//   `output_config.effort` is checked (low, medium, high, xhigh, max) and dropped.
//
// Response: ids derive from the chat's (`chatcmpl-X` -> `msg_X`; a tool call `call_Y` ->
// `toolu_Y`, any other id as it is), the same whole or streamed. Blocks come in the order
// thinking, text, tool_use (the stream: in the order the chunks bring them). finish_reason
// stop -> end_turn (stop_sequence when the caller names the stop string that matched),
// length -> max_tokens, tool_calls (or any finish with calls) -> tool_use, abort -> end_turn.
// usage: `input_tokens` are the prompt tokens not read from the prefix cache, as Anthropic
// counts them (input + cache_read_input_tokens = the prompt).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "actors/admission/api_error.hpp"

namespace courier::admission {

// A chat-completions body (keys in the client's order inside schemas). Throws api_error 400
// naming the field (e.g. "messages[1].content[2].type").
nlohmann::ordered_json anthropic_to_chat_request(const nlohmann::ordered_json& body);

// A whole chat.completion (one choice) as an Anthropic message. `matched_stop`: the stop
// string that ended it, if one did.
nlohmann::ordered_json chat_to_anthropic_response(
    const nlohmann::json& chat_response, const std::optional<std::string>& matched_stop = {});

// An OpenAI error body ({"error": {"message", "type", ...}}) with its HTTP status as
// Anthropic's {"type": "error", "error": {"type", "message"}}.
nlohmann::json anthropic_error(int status, const nlohmann::json& openai_error_body);

// One streamed response: chat chunks in, Anthropic SSE text out ("event: T\ndata: {...}\n\n").
// message_start goes out with the first call, content blocks as the chunks bring them
// (indexes counting up; a block is closed when another begins or the choice finishes), and
// message_delta (stop reason, the final usage) and message_stop only at finish(), so the chat
// stream's usage chunk (include_usage) is in. An error chunk becomes one `error` event and ends
// the stream: nothing is written after it.
// Invariants: at most one block is open; every block started is stopped before message_delta.
class anthropic_stream {
 public:
  // chat_id: the chat response's id (the message is msg_ + its suffix); prompt_tokens:
  // message_start's input_tokens (message_delta carries the final counts).
  anthropic_stream(const std::string& chat_id, std::string model, std::int64_t prompt_tokens = 0);

  std::string on_chunk(const nlohmann::json& chat_chunk);
  std::string finish(const std::optional<std::string>& matched_stop = {});

 private:
  enum class block { none, thinking, text, tool_use };
  void start(std::string& out);
  void open(block kind, nlohmann::ordered_json content_block, std::string& out);
  void close(std::string& out);

  std::string id_;
  std::string model_;
  std::int64_t prompt_tokens_;
  bool started_ = false;
  bool ended_ = false;
  block open_ = block::none;
  std::int64_t next_index_ = 0;                       // the index of the next block to start
  std::map<std::int64_t, std::int64_t> call_blocks_;  // chat tool-call index -> block index
  std::string finish_reason_;
  nlohmann::json usage_;  // the chat usage, once its chunk came
};

}  // namespace courier::admission
