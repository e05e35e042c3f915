#include "text/output_parsers/json_string_decoder.hpp"

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {
namespace {

constexpr char32_t replacement = 0xFFFD;

char32_t hex_value(char c) {
  if (c >= '0' && c <= '9') return static_cast<char32_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<char32_t>(c - 'a' + 10);
  return static_cast<char32_t>(c - 'A' + 10);
}

char unescape(char c) {
  switch (c) {
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return c;  // '"', '\\', '/'
  }
}

}  // namespace

void json_string_decoder::push(char c, std::string& out) {
  switch (state_) {
    case state::plain:
      if (c == '\\') {
        state_ = state::escape;
        return;
      }
      flush_high(out);
      out += c;
      return;
    case state::escape:
      if (c == 'u') {
        hex_ = 0;
        hex_digits_ = 0;
        state_ = state::hex;
        return;
      }
      flush_high(out);
      out += unescape(c);
      state_ = state::plain;
      return;
    case state::hex:
      hex_ = hex_ * 16 + hex_value(c);
      if (++hex_digits_ < 4) return;
      state_ = state::plain;
      code_unit(hex_, out);
      return;
  }
}

void json_string_decoder::finish(std::string& out) {
  flush_high(out);
  state_ = state::plain;
}

void json_string_decoder::code_unit(char32_t unit, std::string& out) {
  if (high_ != 0 && unit >= 0xDC00 && unit <= 0xDFFF) {
    append_utf8(out, 0x10000 + ((high_ - 0xD800) << 10) + (unit - 0xDC00));
    high_ = 0;
    return;
  }
  flush_high(out);
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    high_ = unit;
    return;
  }
  append_utf8(out, unit >= 0xDC00 && unit <= 0xDFFF ? replacement : unit);
}

void json_string_decoder::flush_high(std::string& out) {
  if (high_ == 0) return;
  append_utf8(out, replacement);
  high_ = 0;
}

}  // namespace courier::text::parsers
