#include "text/output_parsers/json_scanner.hpp"

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

json_scanner::step json_scanner::push(char c) {
  switch (state_) {
    case state::value_or_close:
      if (c == ']') return close(']');
      [[fallthrough]];
    case state::value:
      return begin_value(c);
    case state::key_or_close:
      if (c == '}') return close('}');
      [[fallthrough]];
    case state::key:
      if (is_json_space(c)) return step::more;
      if (c != '"') return fail();
      in_key_ = true;
      state_ = state::string;
      return step::more;
    case state::string:
    case state::escape:
    case state::hex:
      return push_string(c);
    case state::colon:
      if (is_json_space(c)) return step::more;
      if (c != ':') return fail();
      state_ = state::value;
      return step::more;
    case state::after_value:
      if (is_json_space(c)) return step::more;
      if (c == ',') {
        state_ = stack_.back() == '{' ? state::key : state::value;
        return step::more;
      }
      return c == '}' || c == ']' ? close(c) : fail();
    case state::minus:
    case state::integer:
    case state::zero:
    case state::dot:
    case state::fraction:
    case state::exponent:
    case state::exponent_sign:
    case state::exponent_digits:
      return push_number(c);
    case state::literal:
      if (c != *literal_) return fail();
      return *++literal_ == '\0' ? end_value() : step::more;
    case state::spent:
      return step::error;
  }
  return fail();
}

// Inside a string (a key's or a value's): escapes and their hex digits.
json_scanner::step json_scanner::push_string(char c) {
  switch (state_) {
    case state::string:
      if (c == '"') {
        if (!in_key_) return end_value();
        in_key_ = false;
        state_ = state::colon;
        return step::more;
      }
      if (c == '\\') state_ = state::escape;
      return static_cast<unsigned char>(c) < 0x20 ? fail() : step::more;
    case state::escape:
      switch (c) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          state_ = state::string;
          return step::more;
        case 'u':
          hex_left_ = 4;
          state_ = state::hex;
          return step::more;
        default:
          return fail();
      }
    case state::hex:
      if (!is_hex(c)) return fail();
      if (--hex_left_ == 0) state_ = state::string;
      return step::more;
    default:
      return fail();
  }
}

// Inside a number, after its first character: JSON's grammar for the rest.
json_scanner::step json_scanner::push_number(char c) {
  switch (state_) {
    case state::minus:
      if (c == '0')
        state_ = state::zero;
      else if (is_digit(c))
        state_ = state::integer;
      else
        return fail();
      return step::more;
    case state::integer:
      if (is_digit(c)) return step::more;
      [[fallthrough]];
    case state::zero:
      if (c == '.')
        state_ = state::dot;
      else if (c == 'e' || c == 'E')
        state_ = state::exponent;
      else
        return end_number(c);
      return step::more;
    case state::dot:
      if (!is_digit(c)) return fail();
      state_ = state::fraction;
      return step::more;
    case state::fraction:
      if (is_digit(c)) return step::more;
      if (c != 'e' && c != 'E') return end_number(c);
      state_ = state::exponent;
      return step::more;
    case state::exponent:
      if (c == '+' || c == '-')
        state_ = state::exponent_sign;
      else if (is_digit(c))
        state_ = state::exponent_digits;
      else
        return fail();
      return step::more;
    case state::exponent_sign:
      if (!is_digit(c)) return fail();
      state_ = state::exponent_digits;
      return step::more;
    case state::exponent_digits:
      return is_digit(c) ? step::more : end_number(c);
    default:
      return fail();
  }
}

json_scanner::step json_scanner::begin_value(char c) {
  if (is_json_space(c)) return step::more;
  switch (c) {
    case '{':
      return open('{', state::key_or_close);
    case '[':
      return open('[', state::value_or_close);
    case '"':
      state_ = state::string;
      return step::more;
    case '-':
      state_ = state::minus;
      return step::more;
    case '0':
      state_ = state::zero;
      return step::more;
    case 't':
      literal_ = "rue";
      state_ = state::literal;
      return step::more;
    case 'f':
      literal_ = "alse";
      state_ = state::literal;
      return step::more;
    case 'n':
      literal_ = "ull";
      state_ = state::literal;
      return step::more;
    default:
      if (!is_digit(c)) return fail();
      state_ = state::integer;
      return step::more;
  }
}

json_scanner::step json_scanner::open(char bracket, state next) {
  if (stack_.size() >= max_depth) return fail();
  stack_ += bracket;
  state_ = next;
  return step::more;
}

json_scanner::step json_scanner::close(char bracket) {
  if (stack_.empty() || stack_.back() != (bracket == '}' ? '{' : '[')) return fail();
  stack_.pop_back();
  return end_value();
}

json_scanner::step json_scanner::end_value() {
  if (!stack_.empty()) {
    state_ = state::after_value;
    return step::more;
  }
  state_ = state::spent;
  return step::done;
}

// A number ends at the first byte that cannot continue it; inside a container that byte is the
// container's (',' or a bracket), at the top level it is the caller's.
json_scanner::step json_scanner::end_number(char c) {
  if (stack_.empty()) {
    state_ = state::spent;
    return step::done_before;
  }
  state_ = state::after_value;
  return push(c);
}

json_scanner::step json_scanner::fail() {
  state_ = state::spent;
  return step::error;
}

}  // namespace courier::text::parsers
