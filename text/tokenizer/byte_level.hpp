#pragma once
// GPT-2's reversible map between the 256 byte values and 256 printable code points, which
// byte-level BPE vocabularies are written in ("Ġ" is the space byte). courier runs BPE on raw
// bytes and converts the vocabulary once at load time instead of mapping every input byte.
#include <optional>
#include <string>
#include <string_view>

namespace courier::text::byte_level {

// The code point that stands for byte `b`.
char32_t char_for_byte(unsigned char b);

// The raw bytes a byte-level token string stands for; nullopt when it holds a code point
// outside the map (such tokens cannot come out of byte-level BPE).
std::optional<std::string> to_bytes(std::string_view token);

// The byte-level spelling of raw bytes (the inverse of to_bytes).
std::string from_bytes(std::string_view bytes);

}  // namespace courier::text::byte_level
