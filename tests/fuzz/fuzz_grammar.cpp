// Fuzz target: grammars from untrusted text, as a request's structured-output fields bring them.
// The first byte picks the source (mod 3): GBNF, a regular expression, or a JSON Schema (parsed
// as JSON, in order); the rest is its text. A grammar that compiles is then walked: random
// sentences drawn from its token masks over the byte vocabulary, with each step's mask compared
// to the brute-force reference, and the sentence matched whole again.
//
// Allowed (grammar/README.md): a compiled grammar, or grammar_error; for a JSON Schema also
// invalid JSON (nlohmann::parse_error). A finding: any other exception, a mask that differs from
// the reference, a drawn sentence the grammar does not match, a crash, a sanitizer report, a
// hang (an input compiling past the timeout: the work bounds failed).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>

#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/random_walk.hpp"
#include "grammar/regex_parser.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using courier::fuzz::finding;
namespace grammar = courier::grammar;

std::shared_ptr<const grammar::token_vocabulary> vocab;  // the 256 bytes and end of sequence

// The server's limits but smaller work and memory: a bomb of the corpus is refused in
// milliseconds instead of the default budget's seconds under ASan, so the fuzzer spends its time
// on new inputs (the limits' own paths are exercised all the same).
grammar::compile_limits fuzz_limits() {
  grammar::compile_limits l;
  l.max_work = std::uint64_t{1} << 22;
  l.max_memory_bytes = 16u << 20;
  return l;
}

std::string gbnf_of(std::uint8_t mode, std::string_view text, grammar::compile_budget& budget) {
  switch (mode % 3) {
    case 0:
      return std::string(text);
    case 1:
      return "root ::= " + grammar::to_gbnf(grammar::pattern_language(text, budget)) + "\n";
    default:
      return grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(text), {}, budget);
  }
}

void walk(const std::shared_ptr<const grammar::compiled_grammar>& g, std::uint64_t seed) {
  grammar::mask_cache cache(g, vocab);
  grammar::matcher m(g);
  std::mt19937_64 rng(seed);
  grammar::token_bitmask fast, slow;
  std::string text;
  for (int step = 0; step < 48; ++step) {
    grammar::fill_token_mask(m, cache, fast);
    grammar::fill_token_mask_reference(m, *vocab, slow);
    if (fast != slow) finding("the cached mask differs from the reference after '" + text + "'");
    std::vector<std::uint32_t> allowed;
    for (std::uint32_t id = 0; id < 256; ++id) {
      if (grammar::mask_has(fast, id)) allowed.push_back(id);
    }
    if (m.can_end() && (allowed.empty() || rng() % 4 == 0)) break;
    if (allowed.empty()) finding("a reachable state allows nothing after '" + text + "'");
    const std::uint32_t pick = allowed[rng() % allowed.size()];
    if (!m.accept(vocab->bytes(pick))) finding("the matcher refused a byte its mask allowed");
    text += vocab->bytes(pick);
  }
  grammar::matcher again(g);
  if (!again.accept(text)) finding("the walked text does not match again: '" + text + "'");
  std::mt19937_64 sentence_rng(seed);
  grammar::random_walk_options opts;
  opts.max_tokens = 64;
  if (auto s = grammar::random_sentence(cache, sentence_rng, opts)) {
    if (!grammar::full_match(g, *s)) finding("a random sentence is not in the language: " + *s);
  }
}

void run(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::shared_ptr<const grammar::compiled_grammar> g;
  try {
    grammar::compile_budget budget(fuzz_limits());
    g = grammar::compile_gbnf(gbnf_of(data[0], text, budget), budget);
  } catch (const grammar::grammar_error&) {
    return;
  } catch (const nlohmann::json::parse_error&) {
    if (data[0] % 3 == 2) return;  // not JSON at all: the request parser's 400
    throw;
  }
  std::uint64_t seed = 0;
  for (std::size_t i = 0; i < size; ++i) seed = seed * 131 + data[i];
  walk(g, seed);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocab = grammar::byte_vocabulary();
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(data, size);
  } catch (...) {
    courier::fuzz::undocumented_exception("the grammar compiler");
  }
  return 0;
}
