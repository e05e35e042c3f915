// Mistral calls after [TOOL_CALLS]: a JSON array of call objects (older tokenizers), or the v11
// form `name[ARGS]{...}`, one call per [TOOL_CALLS]. Content before the marker is content.
#include "text/output_parsers/text_scan.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

namespace courier::text::parsers {
namespace {

constexpr std::string_view args_marker = "[ARGS]";
// Function names are short identifiers (OpenAI allows [a-zA-Z0-9_-]{1,64}); a longer run is not
// a name, and bounds what a tentative call holds.
constexpr std::size_t max_name_bytes = 256;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

}  // namespace

bool tool_call_parser::step_mistral_open() {
  if (!skip_space()) {
    if (at_end_) cut_off_call();
    return false;
  }
  const char c = in_[pos_];
  if (c == '[') {
    ++pos_;
    reader_ = call_object_reader();
    phase_ = phase::object;
  } else if (is_name_char(c)) {
    name_.clear();
    phase_ = phase::mistral_name;
  } else {
    give_up_call();
  }
  return true;
}

bool tool_call_parser::step_mistral_name() {
  while (pos_ < in_.size() && is_name_char(in_[pos_])) {
    if (name_.size() == max_name_bytes) {
      give_up_call();
      return true;
    }
    name_ += in_[pos_++];
  }
  if (pos_ == in_.size()) {
    if (at_end_) cut_off_call();
    return false;
  }
  const match m = starts_with(rest(), args_marker);
  if (m == match::partial) {
    if (at_end_) cut_off_call();
    return false;
  }
  if (m != match::yes) {
    give_up_call();
    return true;
  }
  pos_ += args_marker.size();
  args_ = json_scanner();
  phase_ = phase::mistral_args;
  return true;
}

// The call is sent (call_begin) once its arguments open with '{'; before that it can still turn
// out to be content.
bool tool_call_parser::step_mistral_args() {
  if (!call_open_) {
    if (!skip_space()) {
      if (at_end_) cut_off_call();
      return false;
    }
    if (in_[pos_] != '{') {
      give_up_call();
      return true;
    }
    begin_call(std::move(name_));
  }
  const std::size_t from = pos_;
  const auto send = [&] {
    events_.arguments(num_calls_, std::string_view(in_).substr(from, pos_ - from));
  };
  while (pos_ < in_.size()) {
    const json_scanner::step s = args_.push(in_[pos_]);
    if (s != json_scanner::step::more && s != json_scanner::step::done) {
      send();
      end_call();
      phase_ = phase::skip_broken;
      return true;
    }
    ++pos_;
    if (s == json_scanner::step::done) {
      send();
      end_call();
      phase_ = phase::between;
      return true;
    }
  }
  send();
  if (at_end_) {
    truncated_ = true;
    end_call();
  }
  return false;
}

bool tool_call_parser::step_mistral_next() {
  if (!skip_space()) return false;
  switch (in_[pos_]) {
    case ',':
      hold(pos_, pos_);  // the next object is tentative until its name is read
      ++pos_;
      reader_ = call_object_reader();
      phase_ = phase::object;
      return true;
    case ']':
      ++pos_;
      phase_ = phase::between;
      return true;
    default:
      phase_ = phase::content;
      return true;
  }
}

}  // namespace courier::text::parsers
