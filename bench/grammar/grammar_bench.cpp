// Grammar-constrained decoding on the CPU: compile time per grammar, and the time to compute
// one step's token mask along random generations, on a real vocabulary. Prints figures; never
// asserts them.
//
//   build/bench/grammar_bench [--tokenizer DIR_OR_FILE]... [--steps N] [--runs N] [FILE]...
//
// FILE: a .gbnf grammar or a .json JSON Schema (default: tests/data/grammars/json.gbnf, then
// tests/data/schemas/*.json). Each grammar runs `--runs` generations of up to `--steps` tokens
// (default 3 x 256), each token drawn at random from the mask, leaning towards tokens that
// close structure so that generations end. Steps are reported apart: cold ones visit a grammar
// position for the first time (the mask cache computes its split of the vocabulary), warm ones
// find every position cached (what a server sees once a schema has been used). One thread.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "actors/admission/grammar_vocabulary.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/token_mask.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using namespace courier;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct named_grammar {
  std::string name;
  std::string gbnf;
};

void run(const std::string& vocab_name, const text::tokenizer& tok, text::token_id eos,
         const named_grammar& ng, int steps, int runs) {
  const auto vocab = admission::grammar_vocabulary(tok, {eos});
  const auto t0 = clock_type::now();
  const auto g = grammar::compile_gbnf(ng.gbnf);
  const double compile_us = micros(clock_type::now() - t0);
  grammar::mask_cache cache(g, vocab);
  std::vector<double> cold, warm;
  std::mt19937 rng(7);
  int finished = 0;
  for (int r = 0; r < runs; ++r) {
    grammar::matcher m(g);
    grammar::token_bitmask mask;
    for (int s = 0; s < steps; ++s) {
      const std::size_t entries = cache.num_entries();
      const auto a = clock_type::now();
      grammar::fill_token_mask(m, cache, mask);
      (cache.num_entries() != entries ? cold : warm).push_back(micros(clock_type::now() - a));
      std::vector<std::uint32_t> allowed, closing;
      for (std::uint32_t id = 0; id < vocab->id_bound(); ++id) {
        if (!grammar::mask_has(mask, id)) continue;
        allowed.push_back(id);
        if (vocab->bytes(id).find_first_of("\"}],") != std::string::npos) closing.push_back(id);
      }
      if (allowed.empty()) break;
      const bool can_end = grammar::mask_has(mask, eos);
      if (can_end && s >= steps / 4 && rng() % 4 == 0) {
        ++finished;
        break;
      }
      const auto& pool = !closing.empty() && rng() % 2 == 0 ? closing : allowed;
      const std::uint32_t pick = pool[rng() % pool.size()];
      if (pick == eos) {
        ++finished;
        break;
      }
      if (!m.accept(vocab->bytes(pick))) break;
    }
  }
  std::printf("%-8s %-28s compile %8.0f us | cold: %5zu steps median %8.1f us max "
              "%9.1f us | warm: %5zu steps median %7.1f us p90 %8.1f us p99 %8.1f us | %zu "
              "cache entries, %d/%d runs ended\n",
              vocab_name.c_str(), ng.name.c_str(), compile_us, cold.size(),
              percentile(cold, 0.5), percentile(cold, 1.0), warm.size(),
              percentile(warm, 0.5), percentile(warm, 0.9), percentile(warm, 0.99),
              cache.num_entries(), finished, runs);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> tokenizers, files;
  int steps = 256, runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tokenizer" && i + 1 < argc) {
      tokenizers.push_back(argv[++i]);
    } else if (a == "--steps" && i + 1 < argc) {
      steps = std::stoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::stoi(argv[++i]);
    } else {
      files.push_back(a);
    }
  }
  const std::string src = COURIER_SOURCE_DIR;
  if (tokenizers.empty()) {
    tokenizers = {src + "/tests/data/models/tiny-qwen3/tokenizer.json",
                  src + "/tests/data/tokenizers/llama3/tokenizer.json"};
  }
  std::vector<named_grammar> grammars;
  if (files.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(src + "/tests/data/schemas")) {
      files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    files.insert(files.begin(), src + "/tests/data/grammars/json.gbnf");
  }
  for (const std::string& f : files) {
    const std::string name = std::filesystem::path(f).filename().string();
    if (f.size() > 5 && f.substr(f.size() - 5) == ".gbnf") {
      grammars.push_back({name, read(f)});
    } else {
      grammars.push_back({name, grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(read(f)))});
    }
  }
  for (const std::string& path : tokenizers) {
    const auto tok = text::tokenizer::load(
        std::filesystem::is_directory(path) ? path + "/tokenizer.json" : path);
    const auto eos = tok.special_ids().eos ? *tok.special_ids().eos : 0;
    const std::string name = tok.id_bound() > 150000 ? "qwen3" : "llama3";
    std::printf("%s: %u ids\n", name.c_str(), tok.id_bound());
    for (const named_grammar& g : grammars) run(name, tok, eos, g, steps, runs);
  }
  return 0;
}
