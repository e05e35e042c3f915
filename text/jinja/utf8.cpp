#include "text/jinja/utf8.hpp"

#include <algorithm>

namespace courier::text::jinja::utf8 {

namespace {

constexpr char32_t replacement = 0xFFFD;

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

}  // namespace

char32_t decode(std::string_view s, std::size_t& pos) {
  const auto c0 = static_cast<unsigned char>(s[pos]);
  if (c0 < 0x80) {
    ++pos;
    return c0;
  }
  int extra = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c0 & 0xE0) == 0xC0) {
    extra = 1, cp = c0 & 0x1F, min = 0x80;
  } else if ((c0 & 0xF0) == 0xE0) {
    extra = 2, cp = c0 & 0x0F, min = 0x800;
  } else if ((c0 & 0xF8) == 0xF0) {
    extra = 3, cp = c0 & 0x07, min = 0x10000;
  } else {
    ++pos;
    return replacement;
  }
  if (pos + extra >= s.size()) {
    ++pos;
    return replacement;
  }
  for (int i = 1; i <= extra; ++i) {
    const auto c = static_cast<unsigned char>(s[pos + i]);
    if (!is_continuation(c)) {
      ++pos;
      return replacement;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++pos;
    return replacement;
  }
  pos += static_cast<std::size_t>(extra) + 1;
  return cp;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::size_t length(std::string_view s) {
  if (is_ascii(s)) return s.size();
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < s.size(); ++n) decode(s, pos);
  return n;
}

std::vector<std::size_t> boundaries(std::string_view s) {
  std::vector<std::size_t> b;
  b.reserve(s.size() + 1);
  for (std::size_t pos = 0; pos < s.size();) {
    b.push_back(pos);
    decode(s, pos);
  }
  b.push_back(s.size());
  return b;
}

std::size_t offset_of(std::string_view s, std::size_t index) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < index && pos < s.size(); ++i) decode(s, pos);
  return pos;
}

bool is_space(char32_t cp) {
  switch (cp) {
    case ' ':
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {

// Trims from each requested side while `drop` accepts the code point there.
template <typename Pred>
std::string_view trim_if(std::string_view s, bool left, bool right, Pred drop) {
  std::size_t begin = 0;
  std::size_t end = s.size();
  if (left) {
    while (begin < end) {
      std::size_t next = begin;
      if (!drop(decode(s, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      std::size_t start = end - 1;
      while (start > begin && end - start < 4 &&
             is_continuation(static_cast<unsigned char>(s[start]))) {
        --start;
      }
      std::size_t next = start;
      char32_t cp = decode(s, next);
      // Bytes that do not decode to one code point ending at `end` are dropped one at a time.
      if (next != end) start = end - 1, cp = replacement;
      if (!drop(cp)) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

}  // namespace

std::string_view trim(std::string_view s, bool left, bool right) {
  return trim_if(s, left, right, is_space);
}

std::string_view trim_chars(std::string_view s, std::string_view chars, bool left, bool right) {
  std::vector<char32_t> set;
  for (std::size_t pos = 0; pos < chars.size();) set.push_back(decode(chars, pos));
  return trim_if(s, left, right,
                 [&](char32_t cp) { return std::find(set.begin(), set.end(), cp) != set.end(); });
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace courier::text::jinja::utf8
