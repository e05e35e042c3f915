// Llama 3 JSON calls: the output is, after optional whitespace and <|python_tag|>, a call object
// or several separated by ';' - or it is all content.
#include "text/output_parsers/text_scan.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

namespace courier::text::parsers {
namespace {

constexpr std::string_view python_tag = "<|python_tag|>";

}  // namespace

bool tool_call_parser::step_llama_start() {
  if (!skip_space()) {
    if (!at_end_) return false;
    give_up_call();
    return true;
  }
  switch (starts_with(rest(), python_tag)) {
    case match::yes:
      pos_ += python_tag.size();
      break;
    case match::partial:
      if (!at_end_) return false;
      give_up_call();
      return true;
    case match::no:
      break;
  }
  reader_ = call_object_reader();
  phase_ = phase::object;
  return true;
}

bool tool_call_parser::step_llama_after() {
  if (!skip_space()) return false;
  if (in_[pos_] != ';') {
    phase_ = phase::content;
    return true;
  }
  hold(pos_, pos_);
  ++pos_;
  phase_ = phase::llama_next;
  return true;
}

bool tool_call_parser::step_llama_next() {
  if (!skip_space()) {
    if (at_end_) tentative_ = false;  // a trailing ';' ends the list; it is not content
    return false;
  }
  reader_ = call_object_reader();
  phase_ = phase::object;
  return true;
}

}  // namespace courier::text::parsers
