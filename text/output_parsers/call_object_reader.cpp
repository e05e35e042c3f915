#include "text/output_parsers/call_object_reader.hpp"

#include <utility>

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {

using step = json_scanner::step;

call_object_reader::status call_object_reader::push(char c) {
  switch (state_) {
    case state::open:
      if (is_json_space(c)) return status::more;
      if (c != '{') return fail();
      state_ = state::key_or_close;
      return status::more;
    case state::key_or_close:
      if (c == '}') return fail();  // {} has no name
      [[fallthrough]];
    case state::key:
      if (is_json_space(c)) return status::more;
      if (c != '"') return fail();
      key_.clear();
      key_escape_ = false;
      state_ = state::key_text;
      return status::more;
    case state::key_text:
      if (static_cast<unsigned char>(c) < 0x20) return fail();
      if (c == '"' && !key_escape_) {
        state_ = state::colon;
        return status::more;
      }
      key_escape_ = c == '\\' && !key_escape_;
      key_ += c;
      return status::more;
    case state::colon:
      if (is_json_space(c)) return status::more;
      if (c != ':') return fail();
      state_ = state::value;
      return status::more;
    case state::value:
      if (is_json_space(c)) return status::more;
      return read_value_start(c);
    case state::name_value:
    case state::arguments_object:
    case state::arguments_string:
    case state::skip_value:
      return read_value(c);
    case state::after_value:
      if (is_json_space(c)) return status::more;
      if (c == ',') {
        state_ = state::key;
        return status::more;
      }
      if (c != '}' || !has_name_) return fail();
      if (!has_arguments_) arguments_ += "{}";
      state_ = state::spent;
      return status::done;
    case state::spent:
      return status::failed;
  }
  return fail();
}

call_object_reader::status call_object_reader::read_value_start(char c) {
  value_ = json_scanner();
  decoder_ = json_string_decoder();
  if (key_ == "name" && !has_name_) {
    if (c != '"') return fail();
    state_ = state::name_value;
  } else if ((key_ == "arguments" || key_ == "parameters") && !has_arguments_) {
    if (c == '{') {
      state_ = state::arguments_object;
      arguments_ += c;
    } else if (c == '"') {
      state_ = state::arguments_string;  // the quotes are the scanner's, not the arguments'
    } else {
      return fail();
    }
  } else {
    state_ = state::skip_value;
  }
  // No JSON value ends at its first byte (a number ends at the byte after it).
  return value_.push(c) == step::error ? fail() : status::more;
}

call_object_reader::status call_object_reader::read_value(char c) {
  const step s = value_.push(c);
  if (s == step::error) return fail();
  if (s == step::done_before) {  // a number under another key ended before c
    state_ = state::after_value;
    return push(c);
  }
  const bool finished = s == step::done;
  switch (state_) {
    case state::name_value:
      if (!finished) {
        decoder_.push(c, name_);
      } else {
        decoder_.finish(name_);
        if (name_.empty()) return fail();
        has_name_ = true;
      }
      break;
    case state::arguments_object:
      arguments_ += c;
      has_arguments_ = finished;
      break;
    case state::arguments_string:
      if (!finished) {
        decoder_.push(c, arguments_);
      } else {
        decoder_.finish(arguments_);
        has_arguments_ = true;
      }
      break;
    default:
      break;
  }
  if (finished) state_ = state::after_value;
  return status::more;
}

std::string call_object_reader::take_arguments() {
  if (!has_name_) return {};
  return std::exchange(arguments_, {});
}

void call_object_reader::cut() {
  if (state_ == state::arguments_string) decoder_.finish(arguments_);
}

call_object_reader::status call_object_reader::fail() {
  state_ = state::spent;
  return status::failed;
}

}  // namespace courier::text::parsers
