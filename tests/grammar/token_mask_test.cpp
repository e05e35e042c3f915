// Token masks from the cache against the brute-force reference (each token stepped on its
// own), on every state along random sentences: exhaustively on a small vocabulary of all short
// byte strings, and on the Qwen 3 vocabulary for a JSON grammar.
#include "grammar/token_mask.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "grammar/grammar_error.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_token_mask {

using namespace courier::grammar;

namespace {

// Every string of 1 to 3 bytes over `alphabet`, plus the pieces of multi-byte characters.
std::shared_ptr<const token_vocabulary> small_vocabulary(const std::string& alphabet) {
  std::vector<std::string> tokens{"<eos>"};
  std::vector<std::string> level{""};
  for (int len = 1; len <= 3; ++len) {
    std::vector<std::string> next;
    for (const std::string& p : level) {
      for (char c : alphabet) next.push_back(p + c);
    }
    tokens.insert(tokens.end(), next.begin(), next.end());
    level = std::move(next);
  }
  for (const char* piece : {"\xce", "\xb1", "\xce\xb1", "\xe2\x82", "\xac", "\xe2\x82\xac\"",
                            "\xce\xb1\xce", "\"\xce"}) {
    tokens.push_back(piece);
  }
  tokens.push_back("");  // an empty token is never allowed
  return std::make_shared<token_vocabulary>(tokens, std::vector<std::uint32_t>{0},
                                            std::vector<std::uint32_t>{});
}

// Walks random tokens allowed by the reference mask, comparing masks at each state; returns
// the number of states compared.
int compare_along_random_walks(const std::shared_ptr<const compiled_grammar>& g,
                               const std::shared_ptr<const token_vocabulary>& vocab, int walks,
                               int max_steps, mask_cache* given = nullptr) {
  mask_cache own(g, vocab);
  mask_cache& cache = given ? *given : own;
  std::mt19937 rng(1234);
  int compared = 0;
  for (int w = 0; w < walks; ++w) {
    matcher m(g);
    for (int s = 0; s < max_steps; ++s) {
      token_bitmask fast, slow;
      fill_token_mask(m, cache, fast);
      fill_token_mask_reference(m, *vocab, slow);
      ++compared;
      if (fast != slow) {
        for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
          if (mask_has(fast, id) != mask_has(slow, id)) {
            FAIL("walk " << w << " step " << s << ": token " << id << " '" << vocab->bytes(id)
                         << "' cache " << mask_has(fast, id) << " reference "
                         << mask_has(slow, id));
          }
        }
      }
      std::vector<std::uint32_t> allowed;
      for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
        if (mask_has(slow, id)) allowed.push_back(id);
      }
      if (allowed.empty()) FAIL("a reachable state allows no token");
      const std::uint32_t pick = allowed[rng() % allowed.size()];
      const bool is_eos = std::find(vocab->eos_ids().begin(), vocab->eos_ids().end(), pick) !=
                          vocab->eos_ids().end();
      if (is_eos) break;
      REQUIRE(m.accept(vocab->bytes(pick)));
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("token mask: the cache agrees with brute force on all short tokens", "[grammar]") {
  const auto vocab = small_vocabulary("ab{}[],:\" 1");
  const auto json_like = compile_gbnf(R"g(
root   ::= value
value  ::= object | array | string | number
object ::= "{" ( pair ( "," pair )* )? "}"
pair   ::= string ":" value
array  ::= "[" ( value ( "," value )* )? "]"
string ::= "\"" [^"]* "\""
number ::= "1"+
)g");
  CHECK(compare_along_random_walks(json_like, vocab, 40, 30) > 200);
  const auto nested = compile_gbnf(R"g(
root ::= "a" inner "b" | "a" "{" root "}"
inner ::= ( "[" root? "]" )* " "?
)g");
  CHECK(compare_along_random_walks(nested, vocab, 40, 30) > 200);
  const auto utf8 = compile_gbnf(R"g(root ::= "\"" [a-bα€]{1,4} "\"" ( "," root )?)g");
  CHECK(compare_along_random_walks(utf8, vocab, 40, 20) > 200);
}

TEST_CASE("token mask: the states of a counted repeat farther than the longest token from its "
          "end share one cache position, and their masks still equal brute force",
          "[grammar]") {
  // As [a-z ]{0,4000}q: before, every character a new position, each a walk of the vocabulary.
  const auto vocab = small_vocabulary("ab{}[],:\" 1");  // tokens of at most 3 bytes
  const auto long_repeat = compile_gbnf(R"g(root ::= [ab ]{150} "1")g");
  mask_cache cache(long_repeat, vocab);
  CHECK(compare_along_random_walks(long_repeat, vocab, 6, 60, &cache) > 300);
  CHECK(cache.num_entries() <= 5);  // far from the end, then 1, 2 or 3 bytes from it
  // The classes themselves: with strings of up to 3 bytes, states 0..147 are one.
  const byte_dfa& d = long_repeat->dfas().at(0);
  REQUIRE(d.num_states() >= 151);
  const std::vector<std::uint32_t> rep = short_string_classes(d, 3);
  CHECK(rep[0] == 0);
  CHECK(rep[100] == 0);
  CHECK(rep[147] == 0);
  CHECK(rep[148] == 148);  // "1" is 3 bytes away: told apart by "aa1"
  CHECK(rep[150] == 150);
  CHECK(short_string_classes(d, 200)[100] == 100);  // long enough strings tell every state apart
}

TEST_CASE("token mask: a counted repeat's positions farther than the longest token from its "
          "bounds share one cache position; its masks equal brute force up to both bounds",
          "[grammar]") {
  const auto vocab = small_vocabulary("ab{}[],:\" 1");  // tokens of at most 3 bytes
  // Each bound 3,000 copies or more: one counted terminal (before, a rule per copy, each copy
  // a position of its own: a walk of the vocabulary on every decoding step).
  const auto g = compile_gbnf(R"g(root ::= "[" [ab ]{3000,5000} "]")g");
  const byte_dfa& d = g->dfas().at(1);
  REQUIRE(d.counted());
  const std::uint32_t n = d.table_states();
  // Counts from which 3 bytes reach neither bound are one; within 3 of a bound, each alone.
  CHECK(counted_representative(d, 10 * n, 3) == 0);
  CHECK(counted_representative(d, 2996 * n, 3) == 0);
  CHECK(counted_representative(d, 2997 * n, 3) == 2997 * n);
  CHECK(counted_representative(d, 3000 * n, 3) == 3000 * n);
  CHECK(counted_representative(d, 4996 * n, 3) == 3000 * n);
  CHECK(counted_representative(d, 4997 * n, 3) == 4997 * n);
  CHECK(counted_representative(d, 5000 * n, 3) == 5000 * n);
  // Walk to the upper bound by the longest of "ab ", "a" the reference allows, comparing
  // every mask with brute force; then "]", then only the end of sequence is left.
  mask_cache cache(g, vocab);
  matcher m(g);
  REQUIRE(m.accept("["));
  std::size_t taken = 0;
  int compared = 0;
  token_bitmask fast, slow;
  auto id_of = [&](const std::string& bytes) {
    for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
      if (vocab->bytes(id) == bytes) return id;
    }
    FAIL("no token " << bytes);
    return 0u;
  };
  const std::uint32_t word = id_of("ab "), letter = id_of("a"), close = id_of("]");
  for (;;) {
    fill_token_mask(m, cache, fast);
    fill_token_mask_reference(m, *vocab, slow);
    ++compared;
    REQUIRE(fast == slow);
    CHECK(mask_has(slow, close) == (taken >= 3000));
    if (mask_has(slow, word)) {
      REQUIRE(m.accept("ab "));
      taken += 3;
    } else if (mask_has(slow, letter)) {
      REQUIRE(m.accept("a"));
      taken += 1;
    } else {
      break;
    }
  }
  CHECK(taken == 5000);
  CHECK(compared > 1600);
  REQUIRE(mask_has(slow, close));
  REQUIRE(m.accept("]"));
  fill_token_mask(m, cache, fast);
  token_bitmask only_eos(bitmask_words(vocab->id_bound()), 0);
  mask_set(only_eos, 0);
  CHECK(fast == only_eos);
  // Positions: "[", far from both bounds (a few phases of "ab "), near the lower bound (3 bytes
  // either side), near the upper (3 bytes before it), "]": a few dozen, not 5,000.
  CHECK(cache.num_entries() <= 40);
}

TEST_CASE("token mask: a bounded cache keeps within its bytes, dropping the least recently "
          "used positions, and its masks still equal brute force",
          "[grammar]") {
  // A literal whose every position differs from the next within 3 bytes: one position each.
  const auto vocab = small_vocabulary("ab{}[],:\" 1");
  std::mt19937 rng(5);
  const std::string letters = "ab{}[],: 1";
  std::string text;
  for (int i = 0; i < 150; ++i) text += letters[rng() % letters.size()];
  const auto literal = compile_gbnf("root ::= \"" + text + "\"");
  mask_cache unbounded(literal, vocab);
  CHECK(compare_along_random_walks(literal, vocab, 6, 60, &unbounded) > 200);
  const std::size_t all = unbounded.bytes();
  REQUIRE(unbounded.num_entries() > 40);
  CHECK(unbounded.num_dropped() == 0);
  mask_cache bounded(literal, vocab, all / 8);
  CHECK(compare_along_random_walks(literal, vocab, 6, 60, &bounded) > 200);
  CHECK(bounded.bytes() <= all / 8);
  CHECK(bounded.num_entries() < unbounded.num_entries() / 4);
  CHECK(bounded.num_dropped() > 0);
  // A bound smaller than one entry keeps nothing, and the masks are still right.
  mask_cache tiny(literal, vocab, 1);
  CHECK(compare_along_random_walks(literal, vocab, 2, 30, &tiny) > 50);
  CHECK(tiny.num_entries() == 0);
  CHECK(tiny.bytes() == 0);
}

TEST_CASE("token mask: end of sequence is allowed exactly when the grammar is complete",
          "[grammar]") {
  const auto vocab = small_vocabulary("ab");
  const auto g = compile_gbnf(R"g(root ::= "a" "b"?)g");
  mask_cache cache(g, vocab);
  matcher m(g);
  token_bitmask mask;
  fill_token_mask(m, cache, mask);
  CHECK_FALSE(mask_has(mask, 0));
  REQUIRE(m.accept("a"));
  fill_token_mask(m, cache, mask);
  CHECK(mask_has(mask, 0));
  REQUIRE(m.accept("b"));
  fill_token_mask(m, cache, mask);
  CHECK(mask_has(mask, 0));
  std::size_t allowed = 0;
  for (std::uint64_t w : mask) allowed += static_cast<std::size_t>(__builtin_popcountll(w));
  CHECK(allowed == 1);  // only end of sequence
}

}  // namespace courier_test_grammar_token_mask
