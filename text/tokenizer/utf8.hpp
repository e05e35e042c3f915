#pragma once
// UTF-8 helpers shared by the tokenizer and the detokenizer. Repair follows the "maximal
// subpart" rule that Rust's String::from_utf8_lossy and the WHATWG TextDecoder both use: each
// maximal prefix of a would-be sequence that cannot be completed becomes one U+FFFD, and the
// byte that broke it starts the next sequence. Hugging Face's tokenizers do exactly that, so
// matching it here keeps encode() and decode() equal to theirs on invalid input.
#include <cstddef>
#include <string>
#include <string_view>

namespace courier::text::utf8 {

inline constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

// True when `s` is well-formed UTF-8 (no surrogates, no overlongs, nothing past U+10FFFF).
bool is_valid(std::string_view s);

// Appends `in` to `out`, replacing every maximal invalid subpart with U+FFFD. With
// `final_chunk` false an incomplete sequence at the very end is left unconsumed (more bytes
// may complete it); the return value is the number of such trailing bytes, at most 3.
std::size_t append_repaired(std::string& out, std::string_view in, bool final_chunk = true);

// `in` with every maximal invalid subpart replaced by U+FFFD.
std::string repaired(std::string_view in);

// Decodes the code point at `s[i]` of valid UTF-8 and advances `i` past it.
char32_t decode(std::string_view s, std::size_t& i);

// Appends the UTF-8 encoding of `cp` (a scalar value).
void append(std::string& out, char32_t cp);

// Bytes in the sequence that `lead` starts (1 for ASCII and for bytes that cannot lead).
inline std::size_t sequence_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace courier::text::utf8
