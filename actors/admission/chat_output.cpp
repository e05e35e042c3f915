#include "actors/admission/chat_output.hpp"

#include "actors/admission/api_response.hpp"

namespace courier::admission {

chat_output_parser::chat_output_parser(bool reasoning, bool starts_in_reasoning,
                                       std::optional<text::parsers::tool_family> tools) {
  if (reasoning) reasoning_.emplace(starts_in_reasoning);
  if (tools) tools_.emplace(*tools);
}

void add_call_piece(std::vector<tool_call_piece>& calls, tool_call_piece piece) {
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    if (it->index == piece.index) {
      it->arguments += piece.arguments;
      return;
    }
  }
  calls.push_back(std::move(piece));
}

void chat_output_parser::take(std::vector<text::parsers::tool_event> events, chat_pieces& out) {
  using kind = text::parsers::tool_event::kind;
  for (auto& e : events) {
    switch (e.k) {
      case kind::content: out.content += e.text; break;
      case kind::call_begin: {
        tool_call_piece p;
        p.index = e.index;
        p.id = response_id("call_");
        p.name = std::move(e.text);
        num_calls_ = e.index + 1;
        add_call_piece(out.calls, std::move(p));
        break;
      }
      case kind::arguments: {
        tool_call_piece p;
        p.index = e.index;
        p.arguments = std::move(e.text);
        add_call_piece(out.calls, std::move(p));
        break;
      }
    }
  }
}

void chat_output_parser::content(std::string_view text, chat_pieces& out) {
  if (text.empty()) return;
  if (tools_) {
    take(tools_->feed(text), out);
  } else {
    out.content.append(text);
  }
}

void chat_output_parser::push(std::string_view text, chat_pieces& out) {
  if (!reasoning_) return content(text, out);
  text::parsers::reasoning_delta d = reasoning_->feed(text);
  out.reasoning += d.reasoning;
  content(d.content, out);
}

void chat_output_parser::finish(chat_pieces& out) {
  if (reasoning_) {
    text::parsers::reasoning_delta d = reasoning_->finish();
    out.reasoning += d.reasoning;
    content(d.content, out);
  }
  if (tools_) take(tools_->finish(), out);
}

}  // namespace courier::admission
