// One scope's store: proposals from earlier sequences, the byte bound, the candidate bound.
#include "cache/token_store.hpp"

#include <catch2/catch.hpp>

#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_token_store {

using namespace courier::cache;

namespace {

using tokens = std::vector<token_id>;

std::size_t bytes_for(std::size_t num_sequences, std::size_t num_tokens) {
  return num_sequences * token_store::bytes_per_sequence +
         num_tokens * token_store::bytes_per_token;
}

}  // namespace

TEST_CASE("token store: proposes what followed the longest, most recent stored match", "[cache]") {
  token_store store({2, 3, 16}, 1 << 20);
  store.add(tokens{1, 2, 3, 4});
  store.add(tokens{7, 2, 3, 5, 6});
  // [9 2 3]: only [2 3] is stored; the newer sequence has it, followed by 5 6.
  CHECK(store.propose(tokens{9, 2, 3}, 5) == tokens{5, 6});
  // [1 2 3] is stored whole in the older sequence: the longer match wins. The draft stops at
  // the end of that sequence rather than running into the next one.
  CHECK(store.propose(tokens{1, 2, 3}, 5) == tokens{4});
  CHECK(store.propose(tokens{5, 6}, 5).empty());  // stored, but nothing followed it
  CHECK(store.propose(tokens{3}, 5).empty());     // shorter than min_n
  store.check_invariants();
}

TEST_CASE("token store: a proposal tries at most max_candidates positions", "[cache]") {
  const tokens older = {1, 2, 3, 7};
  const tokens newer = {9, 3, 8};
  token_store narrow({1, 3, 2}, 1 << 20);
  token_store wide({1, 3, 3}, 1 << 20);
  for (token_store* s : {&narrow, &wide}) {
    s->add(older);
    s->add(newer);
    s->add(newer);
  }
  // The two newest positions after a 3 are in the copies of `newer`; the third is the longer
  // match [1 2 3] in `older`, found only when three candidates may be tried.
  CHECK(narrow.propose(tokens{1, 2, 3}, 1) == tokens{8});
  CHECK(wide.propose(tokens{1, 2, 3}, 1) == tokens{7});
}

TEST_CASE("token store: over capacity it drops its oldest sequences", "[cache]") {
  token_store store({1, 2, 16}, bytes_for(2, 8));  // room for two sequences of 4 tokens
  store.add(tokens{1, 2, 3, 4});
  store.add(tokens{5, 6, 7, 8});
  CHECK(store.size_bytes() == bytes_for(2, 8));
  store.add(tokens{9, 10, 11, 12});
  CHECK(store.num_sequences() == 2);
  CHECK(store.size_bytes() == bytes_for(2, 8));
  CHECK(store.propose(tokens{1}, 3).empty());
  CHECK(store.propose(tokens{5}, 3) == tokens{6, 7, 8});
  CHECK(store.propose(tokens{9}, 3) == tokens{10, 11, 12});
  store.check_invariants();
}

TEST_CASE("token store: a sequence too long for the store keeps its last tokens", "[cache]") {
  token_store store({1, 2, 16}, bytes_for(1, 3));
  store.add(tokens{1, 2, 3, 4, 5});
  CHECK(store.num_tokens() == 3);
  CHECK(store.propose(tokens{1}, 3).empty());
  CHECK(store.propose(tokens{3}, 3) == tokens{4, 5});
  store.check_invariants();
  token_store tiny({1, 2, 16}, token_store::bytes_per_sequence - 1);
  tiny.add(tokens{1, 2});
  CHECK(tiny.num_sequences() == 0);
}

}  // namespace courier_test_cache_token_store
