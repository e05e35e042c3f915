#include "text/output_parsers/tool_event_list.hpp"

#include <utility>

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {

void tool_event_list::call_begin(std::size_t index, std::string name) {
  restore_carry();
  events_.push_back({tool_event::kind::call_begin, index, std::move(name)});
}

std::vector<tool_event> tool_event_list::take(bool at_end) {
  if (at_end) {
    restore_carry();
  } else if (!events_.empty() && events_.back().k != tool_event::kind::call_begin) {
    tool_event& last = events_.back();
    if (const std::size_t n = incomplete_utf8_tail(last.text); n > 0) {
      carry_ = tool_event{last.k, last.index, last.text.substr(last.text.size() - n)};
      last.text.resize(last.text.size() - n);
      if (last.text.empty()) events_.pop_back();
    }
  }
  return std::exchange(events_, {});
}

void tool_event_list::append(tool_event::kind k, std::size_t index, std::string_view text) {
  if (text.empty()) return;
  restore_carry();
  if (!events_.empty() && events_.back().k == k && events_.back().index == index) {
    events_.back().text += text;
  } else {
    events_.push_back({k, index, std::string(text)});
  }
}

// A held character goes back first, as its own event; text of the same kind and index that
// follows then merges into it.
void tool_event_list::restore_carry() {
  if (!carry_) return;
  events_.push_back(std::move(*carry_));
  carry_.reset();
}

}  // namespace courier::text::parsers
