#pragma once
// The streaming events of tool_call_parser, and the list that collects them between two feeds:
// it merges neighbouring text of the same kind and index, and holds a UTF-8 character that the
// input has not finished until the next feed (or finish) completes it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace courier::text::parsers {

struct tool_event {
  enum class kind {
    content,     // text: content (index unused, 0)
    call_begin,  // text: the function name of call `index`; before any of its arguments
    arguments,   // text: the next piece of call `index`'s arguments JSON
  };
  kind k = kind::content;
  std::size_t index = 0;
  std::string text;
};

class tool_event_list {
 public:
  void content(std::string_view text) { append(tool_event::kind::content, 0, text); }
  void call_begin(std::size_t index, std::string name);
  void arguments(std::size_t index, std::string_view text) {
    append(tool_event::kind::arguments, index, text);
  }
  // The events since the last take. Unless at_end, a trailing character that is not complete yet
  // stays behind and opens the next take's events.
  std::vector<tool_event> take(bool at_end);

 private:
  void append(tool_event::kind k, std::size_t index, std::string_view text);
  void restore_carry();

  std::vector<tool_event> events_;
  std::optional<tool_event> carry_;  // the start of a UTF-8 character held by the last take
};

}  // namespace courier::text::parsers
