// Inputs nobody should send, sent anyway: invalid UTF-8, megabytes, random mixtures.
#include <utf8proc.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"
#include "text/tokenizer/utf8.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_robustness {

using courier::test::llama3_tokenizer;
using courier::test::qwen3_tokenizer;
using courier::test::tokenizer_cases;
using courier::test::tokenizer_data_dir;
using courier::test::valid_utf8;
using courier::text::tokenizer;

namespace {

const std::string fffd = "\xEF\xBF\xBD";

// Llama 3 without its tokenizer_config.json, so decode() does not clean up spaces and
// byte-level BPE must round-trip exactly.
const tokenizer& llama3_raw() {
  static const tokenizer t = [] {
    std::ifstream in(tokenizer_data_dir() + "/tokenizers/llama3/tokenizer.json");
    std::stringstream s;
    s << in.rdbuf();
    return tokenizer::from_json(s.str(), "");
  }();
  return t;
}

std::string nfc(const std::string& s) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::string r(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return r;
}

// Text from fragments that stress every stage: scripts, marks, emoji, whitespace of all
// kinds, digits, contractions, special tokens whole and broken.
std::string random_text(std::mt19937& rng, std::size_t num_fragments) {
  static const std::vector<std::string> fragments = {"a",
                                                     "Z",
                                                     "hello",
                                                     " world",
                                                     "I'M",
                                                     "'s",
                                                     "'ll",
                                                     "don't",
                                                     "0",
                                                     "12345",
                                                     "3.14",
                                                     " ",
                                                     "  ",
                                                     "\t",
                                                     "\n",
                                                     "\r\n",
                                                     "\n\n",
                                                     "\xC2\xA0",
                                                     "\xE3\x80\x80",
                                                     "\xE2\x80\xA8",
                                                     "\xE4\xBD\xA0\xE5\xA5\xBD",
                                                     "\xE3\x81\x93\xE3\x82\x93",
                                                     "\xD0\x9F\xD1\x80",
                                                     "\xD9\x85\xD8\xB1",
                                                     "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA5\x8D",
                                                     "e\xCC\x81",
                                                     "\xCC\x81",
                                                     "\xE1\x84\x80\xE1\x85\xA1",
                                                     "\xF0\x9F\x98\x80",
                                                     "\xE2\x80\x8D",
                                                     "\xEF\xB8\x8F",
                                                     "\xEF\xBB\xBF",
                                                     "!",
                                                     "...",
                                                     "?!",
                                                     "(",
                                                     "{\"k\": [1]}",
                                                     "<",
                                                     "|",
                                                     "<|im_start|>",
                                                     "<|im_end|>",
                                                     "<|endoftext|>",
                                                     "<think>",
                                                     "<|im_",
                                                     "<|begin_of_text|>",
                                                     "<|eot_id|>",
                                                     "_",
                                                     "\x7F",
                                                     std::string(1, '\0'),
                                                     "\xE2\x84\xA6",
                                                     "\xEF\xAC\x81"};
  std::uniform_int_distribution<std::size_t> pick(0, fragments.size() - 1);
  std::string s;
  for (std::size_t i = 0; i < num_fragments; ++i) s += fragments[pick(rng)];
  return s;
}

std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(byte(rng)));
  return s;
}

}  // namespace

TEST_CASE("tokenizer robustness: invalid UTF-8 is encoded as its U+FFFD repair", "[text]") {
  for (const tokenizer* t : {&qwen3_tokenizer(), &llama3_raw()}) {
    CHECK(t->encode("a\xFF"
                    "b") == t->encode("a" + fffd + "b"));
    CHECK(t->encode("\xE4\xBD") == t->encode(fffd));  // truncated: one replacement
    CHECK(t->encode("\xED\xA0\x80") == t->encode(fffd + fffd + fffd));  // a surrogate
    CHECK(t->decode(t->encode("x\xC0\xAFy")) == "x" + fffd + fffd + "y");
  }
}

TEST_CASE("tokenizer robustness: 1 MB inputs, ordinary and pathological, encode and round-trip",
          "[text]") {
  std::string prose;
  for (std::size_t i = 0; prose.size() < (1 << 20); ++i) {
    prose += tokenizer_cases()[i % tokenizer_cases().size()].text + "\n";
  }
  const std::string inputs[] = {
      prose,
      std::string(1 << 20, 'a'),  // one 1 MB word
      std::string(1 << 20, ' '),  // one 1 MB run of spaces
      std::string(1 << 20, '7'),  // a million single digits (qwen3) / triples (llama3)
      [] {
        std::string cjk;  // 1 MB of ideographs with no space: one pre-token
        while (cjk.size() < (1 << 20)) cjk += "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C";
        return cjk;
      }(),
  };
  for (const std::string& input : inputs) {
    for (const tokenizer* t : {&qwen3_tokenizer(), &llama3_raw()}) {
      const auto ids = t->encode(input);
      REQUIRE(!ids.empty());
      REQUIRE(t->decode(ids) == (t == &llama3_raw() ? input : nfc(input)));
    }
  }
  std::mt19937 rng(5);
  const std::string noise = random_bytes(rng, 1 << 20);
  for (const tokenizer* t : {&qwen3_tokenizer(), &llama3_raw()}) {
    const std::string text = t->decode(t->encode(noise));
    CHECK(valid_utf8(text));
  }
}

TEST_CASE("tokenizer robustness: random text round-trips and random bytes never break UTF-8",
          "[text]") {
  // Fixed seeds and a fixed count (bounded work, never a timing): no crash,
  // decode(encode(x)) == x for valid UTF-8 x (modulo NFC for qwen3), and decode() output always
  // valid UTF-8.
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::size_t> fragments(0, 60), bytes(0, 80);
  for (int iterations = 0; iterations < 600; ++iterations) {
    const std::string text = random_text(rng, fragments(rng));
    INFO("iteration " << iterations);
    REQUIRE(valid_utf8(text));
    REQUIRE(qwen3_tokenizer().decode(qwen3_tokenizer().encode(text)) == nfc(text));
    REQUIRE(llama3_raw().decode(llama3_raw().encode(text)) == text);
    REQUIRE(llama3_raw().encode(text, false) == llama3_tokenizer().encode(text, false));

    std::string noisy = random_bytes(rng, bytes(rng));
    noisy.insert(noisy.size() / 2, text);
    for (const tokenizer* t : {&qwen3_tokenizer(), &llama3_tokenizer()}) {
      const auto ids = t->encode(noisy);
      const std::string back = t->decode(ids);
      REQUIRE(valid_utf8(back));
      REQUIRE(valid_utf8(t->decode(ids, true)));
    }
    const std::string repaired = courier::text::utf8::repaired(noisy);
    REQUIRE(llama3_raw().decode(llama3_raw().encode(noisy)) == repaired);
  }
}

}  // namespace courier_test_text_tokenizer_tokenizer_robustness
