#include "text/output_parsers/tool_call_parser.hpp"

#include <utility>

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {
namespace {

constexpr std::string_view hermes_open = "<tool_call>";
constexpr std::string_view hermes_close = "</tool_call>";
constexpr std::string_view mistral_marker = "[TOOL_CALLS]";

}  // namespace

std::optional<tool_family> tool_family_from_name(std::string_view name) {
  if (name == "hermes" || name == "qwen") return tool_family::hermes;
  if (name == "llama3_json" || name == "llama") return tool_family::llama3_json;
  if (name == "mistral") return tool_family::mistral;
  return std::nullopt;
}

parsed_output parse_tool_calls(tool_family family, std::string_view whole) {
  tool_call_parser parser(family);
  parsed_output out;
  auto add = [&out](std::vector<tool_event> events) {
    for (tool_event& e : events) {
      switch (e.k) {
        case tool_event::kind::content:
          out.content += e.text;
          break;
        case tool_event::kind::call_begin:
          out.calls.push_back({std::move(e.text), {}});
          break;
        case tool_event::kind::arguments:
          out.calls[e.index].arguments += e.text;
          break;
      }
    }
  };
  add(parser.feed(whole));
  add(parser.finish());
  out.truncated_call = parser.truncated_call();
  return out;
}

tool_call_parser::tool_call_parser(tool_family family)
    : family_(family),
      phase_(family == tool_family::llama3_json ? phase::llama_start : phase::content) {
  // Llama's output is one call list or all content: the whole start is tentative.
  if (family == tool_family::llama3_json) hold(0, 0);
}

std::vector<tool_event> tool_call_parser::feed(std::string_view piece) {
  in_.append(piece);
  run();
  return events_.take(false);
}

std::vector<tool_event> tool_call_parser::finish() {
  at_end_ = true;
  run();
  return events_.take(true);
}

void tool_call_parser::run() {
  while (step()) {
  }
  compact();
}

// Each step returns true when it changed phase and the next phase should look at the input, false
// when it needs more input (after finish(), when the input is used up).
bool tool_call_parser::step() {
  switch (phase_) {
    case phase::content:
      return step_content();
    case phase::llama_start:
      return step_llama_start();
    case phase::object:
      return step_object();
    case phase::hermes_close:
      return step_hermes_close();
    case phase::between:
      return step_between();
    case phase::llama_after:
      return step_llama_after();
    case phase::llama_next:
      return step_llama_next();
    case phase::mistral_open:
      return step_mistral_open();
    case phase::mistral_name:
      return step_mistral_name();
    case phase::mistral_args:
      return step_mistral_args();
    case phase::mistral_next:
      return step_mistral_next();
    case phase::skip_broken:
      return step_skip_broken();
  }
  return false;
}

bool tool_call_parser::step_content() {
  const std::string_view text = rest();
  if (family_ == tool_family::llama3_json) {  // calls only ever start the output
    events_.content(text);
    pos_ = in_.size();
    return false;
  }
  const std::size_t at = text.find(marker());
  if (at == std::string_view::npos) {
    // A marker's start waits for the rest of it; at the end of output it is dropped.
    const std::size_t keep = partial_marker_tail(text, marker());
    events_.content(text.substr(0, text.size() - keep));
    pos_ = at_end_ ? in_.size() : pos_ + text.size() - keep;
    return false;
  }
  events_.content(text.substr(0, at));
  start_call_at(pos_ + at);
  return true;
}

bool tool_call_parser::step_object() {
  while (pos_ < in_.size()) {
    const call_object_reader::status s = reader_.push(in_[pos_]);
    if (s == call_object_reader::status::failed) {
      send_call_progress();  // a name read before the bad byte still commits the call
      if (call_open_) {
        end_call();
        phase_ = phase::skip_broken;
      } else {
        give_up_call();
      }
      return true;
    }
    ++pos_;
    if (s == call_object_reader::status::done) {
      send_call_progress();
      end_call();
      object_ended();
      return true;
    }
  }
  send_call_progress();
  if (!at_end_) return false;
  if (!call_open_) {
    if (family_ == tool_family::llama3_json) {  // no marker: a JSON answer cut off is content
      give_up_call();
      return true;
    }
    cut_off_call();
    return false;
  }
  reader_.cut();
  send_call_progress();
  truncated_ = true;
  end_call();
  return false;
}

void tool_call_parser::object_ended() {
  switch (family_) {
    case tool_family::hermes:
      phase_ = phase::hermes_close;
      return;
    case tool_family::llama3_json:
      phase_ = phase::llama_after;
      return;
    case tool_family::mistral:
      phase_ = phase::mistral_next;
      return;
  }
}

bool tool_call_parser::step_hermes_close() {
  if (!skip_space()) return false;
  switch (starts_with(rest(), hermes_close)) {
    case match::yes:
      pos_ += hermes_close.size();
      break;
    case match::partial:
      if (!at_end_) return false;
      pos_ = in_.size();  // the closing tag, cut off, still belongs to the call
      break;
    case match::no:  // a missing closing tag does not undo a complete call
      break;
  }
  phase_ = phase::between;
  return true;
}

bool tool_call_parser::step_between() {
  if (!skip_space()) return false;
  const match m = starts_with(rest(), marker());
  if (m == match::yes) {
    start_call_at(pos_);
    return true;
  }
  if (m == match::partial && !at_end_) return false;
  phase_ = phase::content;
  return true;
}

bool tool_call_parser::step_skip_broken() {
  if (family_ == tool_family::llama3_json) {  // no marker to resume at: the rest goes
    pos_ = in_.size();
    return false;
  }
  // Hermes resumes after the broken block's closing tag, Mistral at the next [TOOL_CALLS].
  const std::string_view resync = family_ == tool_family::hermes ? hermes_close : mistral_marker;
  const std::string_view text = rest();
  const std::size_t at = text.find(resync);
  if (at == std::string_view::npos) {
    pos_ = in_.size() - (at_end_ ? 0 : partial_marker_tail(text, resync));
    return false;
  }
  pos_ += at + (family_ == tool_family::hermes ? resync.size() : 0);
  phase_ = phase::between;
  return true;
}

bool tool_call_parser::skip_space() {
  while (pos_ < in_.size() && is_json_space(in_[pos_])) ++pos_;
  return pos_ < in_.size();
}

std::string_view tool_call_parser::marker() const {
  return family_ == tool_family::hermes ? hermes_open : mistral_marker;
}

void tool_call_parser::start_call_at(std::size_t marker_at) {
  hold(marker_at, marker_at + marker().size());
  pos_ = resume_;
  if (family_ == tool_family::hermes) {
    reader_ = call_object_reader();
    phase_ = phase::object;
  } else {
    phase_ = phase::mistral_open;
  }
}

void tool_call_parser::hold(std::size_t from, std::size_t resume) {
  tentative_ = true;
  held_ = from;
  resume_ = resume;
}

void tool_call_parser::give_up_call() {
  events_.content(std::string_view(in_).substr(held_, resume_ - held_));
  pos_ = resume_;
  tentative_ = false;
  phase_ = phase::content;
}

// The output ended (max_tokens) inside a call not yet sent, after its marker: the marker and what
// followed are dropped, as a marker, whole or partial, is never content.
void tool_call_parser::cut_off_call() {
  pos_ = in_.size();
  tentative_ = false;
}

void tool_call_parser::send_call_progress() {
  if (!call_open_ && reader_.has_name()) begin_call(reader_.name());
  if (call_open_) events_.arguments(num_calls_, reader_.take_arguments());
}

void tool_call_parser::begin_call(std::string name) {
  call_open_ = true;
  tentative_ = false;
  events_.call_begin(num_calls_, std::move(name));
}

void tool_call_parser::end_call() {
  call_open_ = false;
  ++num_calls_;
}

// Drops consumed input; a tentative call keeps its text from held_ in case it becomes content.
void tool_call_parser::compact() {
  const std::size_t keep_from = tentative_ ? held_ : pos_;
  if (keep_from == 0) return;
  in_.erase(0, keep_from);
  pos_ -= keep_from;
  if (tentative_) {
    held_ = 0;
    resume_ -= keep_from;
  }
}

}  // namespace courier::text::parsers
