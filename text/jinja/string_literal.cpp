#include "text/jinja/string_literal.hpp"

#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The character a one-letter escape stands for, or 0 when `e` is not one.
char simple_escape(char e) {
  switch (e) {
    case 'n':
      return '\n';
    case 't':
      return '\t';
    case 'r':
      return '\r';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'v':
      return '\v';
    case 'a':
      return '\a';
    case '\\':
    case '\'':
    case '"':
      return e;
    default:
      return 0;
  }
}

}  // namespace

std::size_t decode_string_literal(std::string_view src, std::size_t pos, int& line,
                                  std::string& out) {
  const char quote = src[pos++];
  const int start_line = line;
  auto at = [&](std::size_t i) { return i < src.size() ? src[i] : '\0'; };
  char32_t high_surrogate = 0;  // a \uD800-\uDBFF waiting for its low half
  while (true) {
    if (pos >= src.size()) throw template_error("unclosed string literal", start_line);
    const char c = src[pos++];
    if (c == quote) break;
    if (c == '\n') ++line;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= src.size()) throw template_error("unclosed string literal", start_line);
    const char e = src[pos++];
    const int hex_len = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (hex_len == 0) {
      if (e == '\n') {
        ++line;  // a backslash-newline continues the line
      } else if (const char s = simple_escape(e); s != 0) {
        out += s;
      } else if (e >= '0' && e <= '7') {
        unsigned v = static_cast<unsigned>(e - '0');
        for (int i = 0; i < 2 && at(pos) >= '0' && at(pos) <= '7'; ++i) {
          v = v * 8 + static_cast<unsigned>(src[pos++] - '0');
        }
        utf8::append(out, v);
      } else {
        out += '\\';
        out += e;
      }
      continue;
    }
    char32_t cp = 0;
    for (int i = 0; i < hex_len; ++i) {
      const int d = hex_digit(at(pos));
      if (d < 0) throw template_error(std::string("truncated \\") + e + " escape", line);
      cp = cp * 16 + static_cast<char32_t>(d);
      ++pos;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF && at(pos) == '\\' && at(pos + 1) == 'u') {
      if (high_surrogate != 0) utf8::append(out, 0xFFFD);
      high_surrogate = cp;
      continue;
    }
    if (high_surrogate != 0 && cp >= 0xDC00 && cp <= 0xDFFF) {
      cp = 0x10000 + ((high_surrogate - 0xD800) << 10) + (cp - 0xDC00);
    } else if (high_surrogate != 0) {
      utf8::append(out, 0xFFFD);
    }
    high_surrogate = 0;
    // Lone surrogates and values past U+10FFFF have no UTF-8 form.
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    utf8::append(out, cp);
  }
  if (high_surrogate != 0) utf8::append(out, 0xFFFD);
  return pos;
}

}  // namespace courier::text::jinja
