#pragma once
// Decodes the inside of a JSON string (the bytes between its quotes) a byte at a time into UTF-8,
// so a string can be streamed as it arrives. Its input has been accepted by json_scanner, which
// checked the escapes. A \u escape of an unpaired surrogate decodes as U+FFFD, as JavaScript's
// JSON.parse would leave a lone surrogate that UTF-8 cannot hold.
#include <cstdint>
#include <string>

namespace courier::text::parsers {

class json_string_decoder {
 public:
  void push(char c, std::string& out);
  // The string ended, or was cut off: a high surrogate still waiting for its pair becomes U+FFFD
  // and a half-read escape is dropped.
  void finish(std::string& out);

 private:
  enum class state : std::uint8_t { plain, escape, hex };
  void code_unit(char32_t unit, std::string& out);
  void flush_high(std::string& out);

  state state_ = state::plain;
  int hex_digits_ = 0;
  char32_t hex_ = 0;
  char32_t high_ = 0;  // a high surrogate waiting for its low half; 0 when none
};

}  // namespace courier::text::parsers
