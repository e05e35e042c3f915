#pragma once
// UTF-8 for grammar/: splitting a range of code points into the byte-range sequences that
// encode exactly it (as RE2 and Rust's utf8-ranges do), which is how a class of characters
// becomes byte-level automaton transitions; one code point's decoding and encoding are base's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

using base::append_utf8;
using base::decode_utf8;

struct byte_range {
  std::uint8_t first = 0;
  std::uint8_t last = 0;  // inclusive
};
// Sequences of byte ranges (each 1 to 4 long) whose concatenations are exactly the UTF-8
// encodings of [r.first, r.last] (which must hold no surrogate).
std::vector<std::vector<byte_range>> utf8_sequences(code_point_range r);

}  // namespace courier::grammar
