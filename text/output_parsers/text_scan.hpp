#pragma once
// Byte-level helpers every parser here shares: markers that may arrive split across pieces, and
// UTF-8 characters that may too. Text is bytes; the markers are ASCII, so a marker never starts
// or ends inside a multi-byte character.
#include <cstddef>
#include <string>
#include <string_view>

#include "base/utf8.hpp"

namespace courier::text::parsers {

enum class match { yes, no, partial };

// Whether `s` starts with `literal`; `partial` when `s` is a proper prefix of it (empty included),
// so more input could still make it match.
match starts_with(std::string_view s, std::string_view literal);

// The length of the longest suffix of `s` that is a proper prefix of `marker`: the bytes a stream
// must hold back because the next piece could complete the marker.
std::size_t partial_marker_tail(std::string_view s, std::string_view marker);

// The bytes at the end of `s` that start a UTF-8 character the input has not finished (0 to 3).
// Invalid bytes count as complete: holding them would not make them valid.
std::size_t incomplete_utf8_tail(std::string_view s);

// JSON's whitespace: space, tab, line feed, carriage return.
inline bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

using base::append_utf8;

}  // namespace courier::text::parsers
