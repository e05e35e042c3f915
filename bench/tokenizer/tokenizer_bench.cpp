// Encodes a corpus file with courier's tokenizer, single-threaded, and prints one JSON line:
// bytes, tokens, the median seconds of the timed runs, MB/s, and an FNV-1a hash of the ids
// (so bench.mjs can check that both implementations produced the same ids).
//
// usage: tokenizer_bench TOKENIZER_JSON CORPUS_FILE [RUNS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/tokenizer/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs("usage: tokenizer_bench TOKENIZER_JSON CORPUS_FILE [RUNS]\n", stderr);
    return 2;
  }
  try {
    const auto tok = courier::text::tokenizer::load(argv[1]);
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) throw std::runtime_error(std::string(argv[2]) + ": cannot read");
    std::stringstream s;
    s << in.rdbuf();
    const std::string corpus = s.str();
    const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;

    std::vector<courier::text::token_id> ids = tok.encode(corpus, false);  // warm-up
    std::vector<double> seconds;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      ids = tok.encode(corpus, false);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::uint32_t hash = 2166136261u;  // FNV-1a over the ids' little-endian bytes
    for (auto id : ids) {
      for (int k = 0; k < 4; ++k) {
        hash ^= (id >> (8 * k)) & 0xFF;
        hash *= 16777619u;
      }
    }
    std::printf(
        "{\"bytes\": %zu, \"tokens\": %zu, \"seconds\": %.6f, \"mb_per_s\": %.3f, "
        "\"ids_fnv1a\": %u}\n",
        corpus.size(), ids.size(), median, corpus.size() / median / 1e6, hash);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 1;
  }
}
