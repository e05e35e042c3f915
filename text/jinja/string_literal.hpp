#pragma once
// String literals in templates, decoded as Jinja decodes them: with Python's escapes. \n \t \r
// \b \f \v \a \\ \' \", octal \0-\777, \xHH, \uHHHH (two of them for a surrogate pair) and
// \UHHHHHHHH; an unknown escape keeps its backslash, and a backslash-newline disappears.
#include <cstddef>
#include <string>
#include <string_view>

namespace courier::text::jinja {

// Decodes the literal whose opening quote is src[pos] into `out` and returns the index just
// past its closing quote. `line` (the line of src[pos]) advances over newlines inside. Throws
// template_error on an unclosed literal or a truncated \x, \u or \U escape.
std::size_t decode_string_literal(std::string_view src, std::size_t pos, int& line,
                                  std::string& out);

}  // namespace courier::text::jinja
