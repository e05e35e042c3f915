#include "grammar/utf8_ranges.hpp"

#include <array>
#include <utility>

namespace courier::grammar {

std::size_t decode_utf8(std::string_view s, char32_t& cp) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t n = 0;
  char32_t v = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, v = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, v = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, v = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  cp = v;
  return n;
}

void append_utf8(std::string& out, char32_t cp) {
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

std::vector<std::vector<byte_range>> utf8_sequences(code_point_range r) {
  std::vector<std::vector<byte_range>> out;
  std::vector<code_point_range> todo{r};
  // The last code point of each encoded length.
  constexpr std::array<char32_t, 3> length_ends{0x7F, 0x7FF, 0xFFFF};
  while (!todo.empty()) {
    code_point_range cur = todo.back();
    todo.pop_back();
    bool split = false;
    // Split where the encoded length changes.
    for (char32_t end : length_ends) {
      if (cur.first <= end && cur.last > end) {
        todo.push_back({end + 1, cur.last});
        todo.push_back({cur.first, end});
        split = true;
        break;
      }
    }
    if (split) continue;
    if (cur.last < 0x80) {
      out.push_back({{static_cast<std::uint8_t>(cur.first), static_cast<std::uint8_t>(cur.last)}});
      continue;
    }
    // Split until every continuation byte position spans its full range or a single prefix:
    // then the byte ranges position by position encode exactly the range.
    for (int i = 1; i < 4 && !split; ++i) {
      const char32_t m = (char32_t{1} << (6 * i)) - 1;
      if ((cur.first & ~m) != (cur.last & ~m)) {
        if ((cur.first & m) != 0) {
          todo.push_back({(cur.first | m) + 1, cur.last});
          todo.push_back({cur.first, cur.first | m});
          split = true;
        } else if ((cur.last & m) != m) {
          todo.push_back({cur.last & ~m, cur.last});
          todo.push_back({cur.first, (cur.last & ~m) - 1});
          split = true;
        }
      }
    }
    if (split) continue;
    std::string lo, hi;
    append_utf8(lo, cur.first);
    append_utf8(hi, cur.last);
    std::vector<byte_range> seq;
    for (std::size_t k = 0; k < lo.size(); ++k) {
      seq.push_back({static_cast<std::uint8_t>(lo[k]), static_cast<std::uint8_t>(hi[k])});
    }
    out.push_back(std::move(seq));
  }
  return out;
}

}  // namespace courier::grammar
