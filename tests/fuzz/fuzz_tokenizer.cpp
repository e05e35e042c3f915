// Fuzz target: the bundled tiny-qwen3 tokenizer on arbitrary bytes. Each input is
//  - encoded as text (with and without special tokens), and
//  - read as a stream of token ids (4 bytes each, little-endian, taken modulo a little past
//    id_bound() so that unknown ids occur too), as the engine may sample them;
// both id lists are then decoded whole and through incremental_detokenizer.
//
// Allowed (tokenizer.hpp, incremental_detokenizer.hpp): encode and decode never throw; encoded
// ids lie below id_bound(); decode gives valid UTF-8; every pushed piece is valid UTF-8 and the
// pieces plus flush() equal decode() byte for byte. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"
#include "text/tokenizer/incremental_detokenizer.hpp"
#include "text/tokenizer/tokenizer.hpp"
#include "text/tokenizer/utf8.hpp"

namespace {

using courier::fuzz::finding;
namespace text = courier::text;

const text::tokenizer* tok = nullptr;  // Owned for the whole process.

void check_decode(const std::vector<text::token_id>& ids, bool skip_special) {
  const std::string whole = tok->decode(ids, skip_special);
  if (!text::utf8::is_valid(whole)) finding("decode gave invalid UTF-8");
  text::incremental_detokenizer detok(*tok, skip_special);
  std::string streamed;
  for (auto id : ids) {
    const std::string piece = detok.push(id);
    if (!text::utf8::is_valid(piece)) finding("incremental_detokenizer::push gave invalid UTF-8");
    streamed += piece;
  }
  streamed += detok.flush();
  if (streamed != whole) {
    finding("incremental_detokenizer differs from decode (skip_special_tokens=" +
            std::to_string(skip_special) + "): '" + streamed + "' vs '" + whole + "'");
  }
}

void run(std::string_view bytes) {
  for (bool special : {false, true}) {
    const std::vector<text::token_id> ids = tok->encode(bytes, special);
    for (auto id : ids) {
      if (id >= tok->id_bound()) finding("encode gave an id past id_bound()");
    }
    check_decode(ids, /*skip_special=*/!special);
  }
  std::vector<text::token_id> ids(bytes.size() / 4);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    ids[i] = v % (tok->id_bound() + 16);
  }
  check_decode(ids, false);
  check_decode(ids, true);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tok = new text::tokenizer(
      text::tokenizer::load(courier::fuzz::data_path("models/tiny-qwen3/tokenizer.json")));
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (...) {
    courier::fuzz::undocumented_exception("the tokenizer");
  }
  return 0;
}
