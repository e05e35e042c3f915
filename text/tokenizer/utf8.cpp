#include "text/tokenizer/utf8.hpp"

#include <cstdint>
#include <cstring>

#include "base/utf8.hpp"

namespace courier::text::utf8 {

namespace {

// The range the second byte of a sequence led by `lead` must fall in; the remaining
// continuation bytes are always 0x80..0xBF. Returns the total length, 0 for a byte that can
// never start a sequence (0x80..0xC1, 0xF5..0xFF).
std::size_t lead_info(unsigned char lead, unsigned char& lo, unsigned char& hi) {
  lo = 0x80;
  hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (lead == 0xE0) lo = 0xA0;  // no overlongs
    if (lead == 0xED) hi = 0x9F;  // no surrogates
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (lead == 0xF0) lo = 0x90;  // no overlongs
    if (lead == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    return 4;
  }
  return 0;
}

// Length of the valid sequence at in[i], or 0 if the bytes there do not form one. When they
// form a valid but truncated prefix, `prefix` receives its length (else 0).
std::size_t valid_at(std::string_view in, std::size_t i, std::size_t& prefix) {
  prefix = 0;
  const auto lead = static_cast<unsigned char>(in[i]);
  unsigned char lo, hi;
  const std::size_t len = lead_info(lead, lo, hi);
  if (len == 0) return 0;
  std::size_t k = 1;
  for (; k < len && i + k < in.size(); ++k) {
    const auto c = static_cast<unsigned char>(in[i + k]);
    const bool ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) {
      prefix = k;  // the maximal subpart: k bytes, broken by in[i + k]
      return 0;
    }
  }
  if (k == len) return len;
  prefix = k;  // ran out of input
  return 0;
}

}  // namespace

bool is_valid(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    // ASCII runs dominate real text: test eight bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t prefix;
    const std::size_t len = valid_at(s, i, prefix);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::size_t append_repaired(std::string& out, std::string_view in, bool final_chunk) {
  std::size_t i = 0, run = 0;  // [run, i) is valid and not yet copied
  const std::size_t n = in.size();
  while (i < n) {
    if (static_cast<unsigned char>(in[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t prefix;
    const std::size_t len = valid_at(in, i, prefix);
    if (len != 0) {
      i += len;
      continue;
    }
    out.append(in.data() + run, i - run);
    if (prefix != 0 && i + prefix == n && !final_chunk) return n - i;  // may still complete
    out.append(replacement);
    i += prefix == 0 ? 1 : prefix;
    run = i;
  }
  out.append(in.data() + run, n - run);
  return 0;
}

std::string repaired(std::string_view in) {
  std::string out;
  out.reserve(in.size() + 8);
  append_repaired(out, in, true);
  return out;
}

char32_t decode(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  const std::size_t len = sequence_length(b0);
  char32_t cp = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

void append(std::string& out, char32_t cp) { base::append_utf8(out, cp); }

}  // namespace courier::text::utf8
