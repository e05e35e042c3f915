#include "text/jinja/utf8.hpp"

#include <algorithm>

#include "base/utf8.hpp"

namespace courier::text::jinja::utf8 {

namespace {

constexpr char32_t replacement = 0xFFFD;

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

}  // namespace

char32_t decode(std::string_view s, std::size_t& pos) {
  char32_t cp = 0;
  const std::size_t n = base::decode_utf8(s.substr(pos), cp);
  if (n == 0) {  // one byte at a time past what is not UTF-8
    ++pos;
    return replacement;
  }
  pos += n;
  return cp;
}

void append(std::string& out, char32_t cp) { base::append_utf8(out, cp); }

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

// str.isspace: general category Zs, or bidirectional class WS, B or S.
bool is_space(char32_t cp) { return base::is_white_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

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
