#include "text/tokenizer/normalizer.hpp"

#include <utf8proc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer/utf8.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_normalizer {

using courier::text::nfc_quick_check;
using courier::text::normalizer;

namespace {

// NFC straight from utf8proc, without courier's quick check.
std::string utf8proc_nfc(const std::string& s) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  REQUIRE(n >= 0);
  std::string r(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return r;
}

std::string encode(char32_t cp) {
  std::string s;
  courier::text::utf8::append(s, cp);
  return s;
}

}  // namespace

TEST_CASE("normalizer: NFC composes, reorders and replaces singletons", "[text]") {
  const normalizer nfc = normalizer::nfc();
  std::string buffer;
  CHECK(nfc.apply("e\xCC\x81", buffer) == "\xC3\xA9");                     // e + acute -> é
  CHECK(nfc.apply("\xE2\x84\xA6", buffer) == "\xCE\xA9");                  // OHM SIGN -> OMEGA
  CHECK(nfc.apply("\xE1\x84\x80\xE1\x85\xA1", buffer) == "\xEA\xB0\x80");  // jamo -> 가
  CHECK(nfc.apply("plain ascii", buffer) == "plain ascii");
  CHECK(normalizer().apply("e\xCC\x81", buffer) == "e\xCC\x81");  // identity
}

TEST_CASE("normalizer: every code point the quick check passes is its own NFC", "[text]") {
  for (char32_t cp = 1; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = encode(cp);
    if (nfc_quick_check(s)) {
      INFO("U+" << std::hex << static_cast<std::uint32_t>(cp));
      REQUIRE(utf8proc_nfc(s) == s);
    }
  }
}

TEST_CASE("normalizer: quick check plus utf8proc equals utf8proc alone on mixed text", "[text]") {
  // Starters, composing marks, reorderable marks, Hangul jamo, singletons, compatibility and
  // excluded characters, ordinary letters and CJK.
  const char32_t pool[] = {'a',     'e',   'A',    ' ',    0xE9,   0x301,  0x300,  0x316,
                           0x327,   0x344, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x2126, 0x212B,
                           0xF900,  0x9BE, 0x9C7,  0x3099, 0x304B, 0x4E00, 0xFB01, 0x958,
                           0x1F600, 0x5D9, 0x5B4,  0x1E0A, 0x323,  0x2ADC, 0x1D15E};
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::size_t> len(0, 12), pick(0, std::size(pool) - 1);
  const normalizer nfc = normalizer::nfc();
  std::string buffer;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    for (std::size_t i = len(rng); i > 0; --i) s += encode(pool[pick(rng)]);
    INFO("iteration " << iter);
    REQUIRE(std::string(nfc.apply(s, buffer)) == utf8proc_nfc(s));
  }
}

TEST_CASE("normalizer: no safe code point composes backwards or starts with one that does",
          "[text]") {
  // Derived independently of courier's table: the last code point of the NFD of every
  // primary composite (a code point that NFC rebuilds from its NFD) can combine with what
  // precedes it, as can Hangul vowel and trailing jamo. None of these may pass the quick
  // check, and no code point that passes may decompose into one that starts with them.
  std::vector<bool> combines_back(0x110000, false);
  for (char32_t v = 0x1161; v <= 0x1175; ++v) combines_back[v] = true;
  for (char32_t t = 0x11A8; t <= 0x11C2; ++t) combines_back[t] = true;
  std::vector<std::pair<char32_t, char32_t>> decomposable;  // code point, first of its NFD
  for (char32_t cp = 0xA0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    utf8proc_int32_t buf[8];
    int last_boundary = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 8,
                                           UTF8PROC_DECOMPOSE, &last_boundary);
    if (n <= 1) continue;
    decomposable.emplace_back(cp, static_cast<char32_t>(buf[0]));
    std::string nfd;
    for (utf8proc_ssize_t i = 0; i < n; ++i) nfd += encode(static_cast<char32_t>(buf[i]));
    if (utf8proc_nfc(nfd) == encode(cp)) combines_back[static_cast<std::size_t>(buf[n - 1])] = true;
  }
  CHECK(combines_back[0x301]);   // COMBINING ACUTE ACCENT
  CHECK(combines_back[0x9BE]);   // BENGALI VOWEL SIGN AA: class 0, yet composes
  CHECK(combines_back[0x3099]);  // KANA VOICED SOUND MARK
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (!combines_back[cp]) continue;
    INFO("U+" << std::hex << static_cast<std::uint32_t>(cp));
    REQUIRE(!nfc_quick_check(encode(cp)));
  }
  for (const auto& [cp, first] : decomposable) {
    if (!nfc_quick_check(encode(cp))) continue;
    INFO("U+" << std::hex << static_cast<std::uint32_t>(cp));
    REQUIRE(!combines_back[first]);
  }
}

TEST_CASE("normalizer: normalizing runs inside long text equals normalizing all of it", "[text]") {
  const char32_t pool[] = {'a',    'e',    ' ',   'x',   0x301,  0x316, 0x1100, 0x1161, 0x11A8,
                           0xAC00, 0x2126, 0x9C7, 0x9BE, 0x4E00, 0xE9,  0x3099, 0x304B, 0x1F600};
  std::mt19937 rng(9);
  std::uniform_int_distribution<std::size_t> len(0, 300), pick(0, std::size(pool) - 1);
  std::uniform_int_distribution<int> ascii_run(0, 3);
  const normalizer nfc = normalizer::nfc();
  std::string buffer;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s;
    for (std::size_t i = len(rng); i > 0; --i) {
      s += ascii_run(rng) == 0 ? std::string("plain words ") : encode(pool[pick(rng)]);
    }
    INFO("iteration " << iter);
    REQUIRE(std::string(nfc.apply(s, buffer)) == utf8proc_nfc(s));
  }
}

}  // namespace courier_test_text_tokenizer_normalizer
