#pragma once
// Checks that bytes form one JSON value (RFC 8259), a byte at a time, keeping only the stack of
// open brackets. The tool-call parser has to know where a value ends, and that it is still valid,
// while its text is arriving; nlohmann/json (the only JSON library here) parses complete input
// only, so this small automaton is written here. It builds nothing.
//
// Strict where JSON is strict: control characters inside strings, bad escapes, leading zeros,
// trailing commas and single quotes are errors. Bytes from 0x80 up pass through strings as they
// are (UTF-8 is not validated).
#include <cstddef>
#include <cstdint>
#include <string>

namespace courier::text::parsers {

class json_scanner {
 public:
  enum class step {
    more,         // the byte belongs to the value, which is not finished
    done,         // the byte finished the value
    done_before,  // the value (a number) had ended before this byte, which is not part of it
    error,        // the byte cannot continue a JSON value; every later push is an error too
  };
  // Deeper nesting is an error: the stack stays bounded whatever a model writes.
  static constexpr std::size_t max_depth = 256;

  // Leading whitespace is accepted before the value.
  step push(char c);

 private:
  enum class state : std::uint8_t {
    value,
    value_or_close,  // just after '['
    key,
    key_or_close,  // just after '{'
    string,
    escape,
    hex,
    colon,
    after_value,  // inside a container, after one of its values
    minus,
    zero,
    integer,
    dot,
    fraction,
    exponent,
    exponent_sign,
    exponent_digits,
    literal,
    spent,  // the value ended, or an error
  };
  step push_string(char c);  // push's string and number states
  step push_number(char c);
  step begin_value(char c);
  step open(char bracket, state next);
  step close(char bracket);
  step end_value();
  step end_number(char c);
  step fail();

  state state_ = state::value;
  bool in_key_ = false;            // the string being read is an object key
  int hex_left_ = 0;               // hex digits still due in a \u escape
  const char* literal_ = nullptr;  // the rest of true/false/null still due
  std::string stack_;              // '{' or '[' per open container
};

}  // namespace courier::text::parsers
