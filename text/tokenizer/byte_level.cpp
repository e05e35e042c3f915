#include "text/tokenizer/byte_level.hpp"

#include <array>

#include "text/tokenizer/utf8.hpp"

namespace courier::text::byte_level {

namespace {

struct tables {
  std::array<char32_t, 256> to_char{};
  std::array<int, 324> to_byte{};  // every mapped code point is below 324; -1: unmapped
};

// bytes_to_unicode() from GPT-2's encoder.py: printable Latin-1 bytes stand for themselves,
// the other 68 take the code points from U+0100 upwards in byte order.
const tables& get() {
  static const tables t = [] {
    tables r;
    r.to_byte.fill(-1);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      r.to_char[b] = static_cast<char32_t>(printable ? b : next++);
      r.to_byte[r.to_char[b]] = b;
    }
    return r;
  }();
  return t;
}

}  // namespace

char32_t char_for_byte(unsigned char b) {
  return get().to_char[b];
}

std::optional<std::string> to_bytes(std::string_view token) {
  if (!utf8::is_valid(token)) return std::nullopt;
  const tables& t = get();
  std::string out;
  out.reserve(token.size());
  std::size_t i = 0;
  while (i < token.size()) {
    const char32_t cp = utf8::decode(token, i);
    if (cp >= t.to_byte.size() || t.to_byte[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(t.to_byte[cp]));
  }
  return out;
}

std::string from_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) utf8::append(out, char_for_byte(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace courier::text::byte_level
