#pragma once
// Template source -> tokens, with Jinja's whitespace control already applied to the text
// tokens: `{%-`/`-%}` (and the same on `{{ }}` and `{# #}`) strip all whitespace on that side,
// and the environment transformers renders with, trim_blocks and lstrip_blocks, is always on:
// the first newline after a block or comment tag is dropped, and spaces and tabs before one at
// the start of a line are too. `{%+` and `+%}` opt a tag out of those two. As in Jinja, "\r\n"
// and "\r" read as "\n" and one trailing newline of the source is dropped.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace courier::text::jinja {

enum class token_kind {
  text,         // template text between tags
  var_begin,    // {{
  var_end,      // }}
  block_begin,  // {%
  block_end,    // %}
  name,         // identifiers and keywords (if, in, not, true, ...)
  string,       // a string literal, escapes decoded
  integer,
  floating,
  op,  // an operator or bracket, spelled in `text`
  end_of_input,
};

struct token {
  token_kind kind = token_kind::end_of_input;
  std::string text;
  std::int64_t int_value = 0;
  double float_value = 0;
  int line = 1;  // where the token starts
};

// Throws template_error (with the line) on an unclosed tag, comment or string, or a character
// that starts no token. The result always ends with one end_of_input token.
std::vector<token> tokenize(std::string_view source);

}  // namespace courier::text::jinja
