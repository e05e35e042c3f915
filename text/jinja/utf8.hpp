#pragma once
// UTF-8 helpers for the string operations Jinja defines on code points (length, indexing,
// slicing, strip). Invalid input never throws: a bad byte decodes as U+FFFD and advances one
// byte, so every loop over a string terminates.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace courier::text::jinja::utf8 {

// The code point at `pos`, advancing `pos` past it.
char32_t decode(std::string_view s, std::size_t& pos);
void append(std::string& out, char32_t cp);

bool is_ascii(std::string_view s);
std::size_t length(std::string_view s);  // in code points
// Byte offset of each code point, then s.size(): code point i is [b[i], b[i + 1]). Costs 8
// bytes per code point: callers charge for it first.
std::vector<std::size_t> boundaries(std::string_view s);
// The byte offset where code point `index` starts, or s.size() past the end; allocates nothing.
std::size_t offset_of(std::string_view s, std::size_t index);

// Whitespace as Python's str.isspace sees it, which is what Jinja2 strips, splits and lexes
// with (semantics follow Jinja2: README): Unicode's White_Space and U+001C..U+001F, not U+FEFF
// (which JavaScript's trim, and so @huggingface/jinja, strips).
bool is_space(char32_t cp);
// '0'..'9' only (the lexer's numbers, str.isdigit on ASCII).
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
std::string_view trim(std::string_view s, bool left, bool right);
// Strips the code points in `chars` (Python's str.strip(chars)).
std::string_view trim_chars(std::string_view s, std::string_view chars, bool left, bool right);

// Case mapping is ASCII only; other code points pass through unchanged.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

}  // namespace courier::text::jinja::utf8
