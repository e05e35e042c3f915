// One tokenizer shared by several threads: the word cache is the only shared mutable state.
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "tests/text/tokenizer/tokenizer_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_threads {

using courier::test::qwen3_tokenizer;
using courier::test::tokenizer_cases;

TEST_CASE("tokenizer threads: concurrent encodes of one tokenizer all match the reference",
          "[text]") {
  const auto& t = qwen3_tokenizer();
  const auto& cases = tokenizer_cases();
  constexpr int num_threads = 4;
  std::vector<int> mismatches(num_threads, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < num_threads; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 5; ++round) {
        // Each thread walks the cases in its own order so that cache slots are contended.
        for (std::size_t i = 0; i < cases.size(); ++i) {
          const auto& c = cases[(i * (2 * k + 1) + static_cast<std::size_t>(round)) % cases.size()];
          if (t.encode(c.text) != c.qwen3) ++mismatches[static_cast<std::size_t>(k)];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) CHECK(m == 0);
}

}  // namespace courier_test_text_tokenizer_tokenizer_threads
