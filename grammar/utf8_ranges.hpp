#pragma once
// UTF-8 for grammar/: decoding one code point, encoding one, and splitting a range of code
// points into the byte-range sequences that encode exactly it (as RE2 and Rust's utf8-ranges
// do), which is how a class of characters becomes byte-level automaton transitions.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/expr.hpp"

namespace courier::grammar {

// The code point at the start of `s` into `cp`; returns its length in bytes, or 0 when `s` does
// not start with a valid UTF-8 encoding (overlong forms and surrogates are invalid).
std::size_t decode_utf8(std::string_view s, char32_t& cp);
void append_utf8(std::string& out, char32_t cp);

struct byte_range {
  std::uint8_t first = 0;
  std::uint8_t last = 0;  // inclusive
};
// Sequences of byte ranges (each 1 to 4 long) whose concatenations are exactly the UTF-8
// encodings of [r.first, r.last] (which must hold no surrogate).
std::vector<std::vector<byte_range>> utf8_sequences(code_point_range r);

}  // namespace courier::grammar
