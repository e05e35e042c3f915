#pragma once
// A chat choice's text as OpenAI clients want it: reasoning (`reasoning_content`), content, and
// tool calls (`tool_calls`, with ids), read out of the generated text by the model family's
// parsers (text/output_parsers) as it streams. One per choice; the request actor feeds it the
// text that passed the stop strings.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/output_parsers/reasoning_parser.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

namespace courier::admission {

// A piece of one tool call: its first piece carries the id and the name; later ones only
// arguments text (a stream's delta). Whole responses hold one per call, arguments complete.
struct tool_call_piece {
  std::size_t index = 0;
  std::string id;    // "call_" + 24 hex digits; empty after the first piece
  std::string name;  // empty after the first piece
  std::string arguments;
};

// What the parsers made of some text, to add to a choice's output.
struct chat_pieces {
  std::string reasoning, content;
  std::vector<tool_call_piece> calls;
};

class chat_output_parser {
 public:
  // reasoning: read <think>...</think> (starting inside it when the prompt opened it);
  // tools: read calls in that family's syntax.
  chat_output_parser(bool reasoning, bool starts_in_reasoning,
                     std::optional<text::parsers::tool_family> tools);

  void push(std::string_view text, chat_pieces& out);
  void finish(chat_pieces& out);  // the end of the output
  bool called() const { return num_calls_ > 0; }

 private:
  void content(std::string_view text, chat_pieces& out);
  void take(std::vector<text::parsers::tool_event> events, chat_pieces& out);

  std::optional<text::parsers::reasoning_parser> reasoning_;
  std::optional<text::parsers::tool_call_parser> tools_;
  std::size_t num_calls_ = 0;
};

// Appends `piece` to `calls`: to the last entry of the same call when there is one (so a whole
// response keeps one entry per call, and a stream chunk one per call it touches).
void add_call_piece(std::vector<tool_call_piece>& calls, tool_call_piece piece);

}  // namespace courier::admission
