#pragma once
// The normalizer stage of tokenizer.json: nothing, or NFC (alone or in a Sequence: NFC twice is
// NFC once). NFC comes from utf8proc; a quick check skips it for text that is already NFC,
// which is nearly all text (every run of ASCII, Latin-1, CJK ideographs, precomposed Hangul),
// and limits utf8proc to the runs around the code points that may change.
#include <cstddef>
#include <string>
#include <string_view>

namespace courier::text {

class normalizer {
 public:
  normalizer() = default;  // the identity
  static normalizer nfc();

  bool is_identity() const { return !nfc_; }
  // The most a text's byte length can shrink by normalizing: NFC composes at most three code
  // points into one of no fewer bytes than a third of theirs (Hangul L+V+T: 9 bytes to 3) and
  // never drops one.
  std::size_t max_shrink() const { return nfc_ ? 3 : 1; }

  // The normalized form of `in` (valid UTF-8): `in` itself when it is already normalized,
  // else a view of `buffer`, which receives the result.
  std::string_view apply(std::string_view in, std::string& buffer) const;

 private:
  bool nfc_ = false;
};

// True when every code point of `s` is one whose presence cannot make a string change under
// NFC (NFC_Quick_Check=Yes, canonical combining class 0, never the second of a composition);
// such a string is already NFC. Exposed for tests.
bool nfc_quick_check(std::string_view s);

}  // namespace courier::text
