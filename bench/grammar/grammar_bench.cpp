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
//
//   build/bench/grammar_bench --bombs [--tokenizer DIR_OR_FILE] [NAME_SUBSTRING]
//
// The compile bombs of issue 45 instead, each in a child process under the default
// compile_limits: the time to GBNF and to compile, the budget's peak memory estimate and the
// child's max RSS above its start, and the limit that refused it; for a grammar that compiles,
// the first two mask fills (both cold) on the first tokenizer's vocabulary.
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

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
#include "grammar/expr.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/regex_parser.hpp"
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

// --- the compile bombs (--bombs) ---

struct bomb {
  std::string name;
  std::string kind;  // regex, schema, gbnf, choice (a JSON list of strings)
  std::string source;
};

std::string six_letters(int i) {
  std::string w;
  for (int k = 0; k < 6; ++k, i /= 26) w += static_cast<char>('a' + i % 26);
  return w;
}

// `count` pieces made by `piece(i)`, joined by `sep`.
template <typename F>
std::string joined(int count, const char* sep, F piece) {
  std::string out;
  for (int i = 0; i < count; ++i) out += (i ? sep : "") + piece(i);
  return out;
}

std::vector<bomb> bombs() {
  using std::to_string;
  const auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  std::vector<bomb> out = {
      {"regex (.*){1,10000}", "regex", "(.*){1,10000}"},
      {"regex [\\s\\S]{0,10000}", "regex", "[\\s\\S]{0,10000}"},
      {"regex (a|a?){1,5000}", "regex", "(a|a?){1,5000}"},
      {"regex ([a-z]*[0-9]*){1,2000}", "regex", "([a-z]*[0-9]*){1,2000}"},
      {"regex 200 nested groups", "regex", std::string(200, '(') + "a" + std::string(200, ')')},
      {"regex [a-z ]{0,4000}qN", "regex", "[a-z ]{0,4000}qN"},
      {"schema pattern (.*){1,10000}", "schema",
       R"({"type": "string", "pattern": "(.*){1,10000}"})"},
      {"gbnf x{1,10000}, x ::= [a-z]*", "gbnf", "root ::= x{1,10000}\nx ::= [a-z]*\n"},
  };
  out.push_back({"schema 5000 optional properties", "schema",
                 R"({"type": "object", "properties": {)" + joined(5000, ",", [](int i) {
                   return "\"p" + to_string(i) + R"(": {"type": "string"})";
                 }) + "}}"});
  out.push_back({"schema 3000 anyOf branches", "schema",
                 R"({"anyOf": [)" + joined(3000, ",", [](int i) {
                   const std::string k = "\"k" + to_string(i) + "\"";
                   return R"({"type": "object", "properties": {)" + k +
                          R"(: {"type": "integer"}}, "required": [)" + k + "]}";
                 }) + "]}"});
  out.push_back({"schema 3000 long keys", "schema",
                 R"({"type": "object", "properties": {)" + joined(3000, ",", [](int i) {
                   std::string key = to_string(i);
                   return "\"" + std::string(64 - key.size(), '0') + key +
                          R"(": {"type": "boolean"})";
                 }) + "}}"});
  out.push_back({"regex 50000 words", "regex", joined(50000, "|", six_letters)});
  out.push_back({"gbnf 50000 words", "gbnf", "root ::= " + joined(50000, " | ", [&](int i) {
                                               return quoted(six_letters(i));
                                             }) + "\n"});
  const auto value = [&](int i) { return quoted("value-" + to_string(i)); };
  out.push_back({"schema enum 100000 strings", "schema",
                 R"({"enum": [)" + joined(100000, ",", value) + "]}"});
  out.push_back({"choice 100000 literals", "choice", "[" + joined(100000, ",", value) + "]"});
  out.push_back(
      {"gbnf 100000 literals", "gbnf", "root ::= " + joined(100000, " | ", value) + "\n"});
  out.push_back(
      {"schema 20000 required", "schema",
       R"({"type": "object", "properties": {)" +
           joined(20000, ",",
                  [](int i) { return "\"r" + to_string(i) + R"(": {"type": "integer"})"; }) +
           R"(}, "required": [)" +
           joined(20000, ",", [](int i) { return "\"r" + to_string(i) + "\""; }) + "]}"});
  return out;
}

// The source to GBNF as admission does it, on `budget`.
std::string bomb_gbnf(const bomb& b, grammar::compile_budget& budget) {
  if (b.kind == "regex")
    return "root ::= " + grammar::to_gbnf(grammar::parse_regex(b.source, budget).e) + "\n";
  if (b.kind == "schema")
    return grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(b.source), {}, budget);
  if (b.kind == "gbnf") return b.source;
  std::vector<grammar::expr> options;
  for (const auto& c : nlohmann::json::parse(b.source))
    options.push_back(grammar::expr::make_literal(c.get<std::string>()));
  return "root ::= " + grammar::to_gbnf(grammar::expr::make_alternation(std::move(options))) + "\n";
}

// A line of /proc/self/status ("VmRSS", "VmHWM"), in kB.
long status_kb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  }
  return 0;
}

// In the child: compile one bomb and print its line (and mask fills when it compiles).
void run_bomb(const bomb& b, const std::shared_ptr<const grammar::token_vocabulary>& vocab) {
  std::ofstream("/proc/self/clear_refs") << "5";  // the peak RSS (VmHWM) starts over here
  const long start_kb = status_kb("VmRSS");
  grammar::compile_budget budget;
  std::string outcome = "compiled";
  double gbnf_ms = 0, compile_ms = 0;
  std::shared_ptr<const grammar::compiled_grammar> g;
  auto t0 = clock_type::now();
  try {
    const std::string gbnf = bomb_gbnf(b, budget);
    gbnf_ms = micros(clock_type::now() - t0) / 1000;
    t0 = clock_type::now();
    g = grammar::compile_gbnf(gbnf, budget);
    compile_ms = micros(clock_type::now() - t0) / 1000;
  } catch (const grammar::grammar_error& e) {
    (gbnf_ms == 0 ? gbnf_ms : compile_ms) = micros(clock_type::now() - t0) / 1000;
    outcome = "refused (" + (e.limit.empty() ? std::string("no limit") : e.limit) + ")";
  }
  if (vocab && !g) return;  // the mask pass: refused ones were reported by the compile pass
  std::printf("%-34s %-18s to GBNF %7.1f ms, compile %7.1f ms, budget peak %6.1f MB, work %5.0f M",
              b.name.c_str(), outcome.c_str(), gbnf_ms, compile_ms,
              static_cast<double>(budget.peak_memory()) / (1 << 20),
              static_cast<double>(budget.work()) / 1e6);
  if (g && vocab) {
    grammar::mask_cache cache(g, vocab);
    grammar::matcher m(g);
    grammar::token_bitmask mask;
    double fill[2] = {0, 0};
    for (double& f : fill) {
      const auto a = clock_type::now();
      grammar::fill_token_mask(m, cache, mask);
      f = micros(clock_type::now() - a) / 1000;
      std::uint32_t pick = 0;  // the first allowed token that is not end of sequence
      while (pick < vocab->id_bound() &&
             (!grammar::mask_has(mask, pick) || vocab->bytes(pick).empty()))
        ++pick;
      if (pick == vocab->id_bound() || !m.accept(vocab->bytes(pick))) break;
    }
    std::printf(", %zu stacks, mask fills %.1f + %.1f ms", m.current().stacks.size(), fill[0],
                fill[1]);
  }
  std::printf("\n");
  if (!vocab) {
    std::printf("    peak RSS %+.1f MB over the start\n",
                static_cast<double>(status_kb("VmHWM") - start_kb) / 1024);
  }
  std::fflush(stdout);
}

// Each bomb in a child (a refusal, a crash or an OOM stays there).
void run_bombs(const std::string& only,
               const std::shared_ptr<const grammar::token_vocabulary>& vocab) {
  for (const bomb& b : bombs()) {
    if (!only.empty() && b.name.find(only) == std::string::npos) continue;
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      run_bomb(b, vocab);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) std::printf("    (the child died: signal %d)\n", WTERMSIG(status));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> tokenizers, files;
  int steps = 256, runs = 3;
  bool bomb_mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--bombs") {
      bomb_mode = true;
    } else if (a == "--tokenizer" && i + 1 < argc) {
      tokenizers.push_back(argv[++i]);
    } else if (a == "--steps" && i + 1 < argc) {
      steps = std::stoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::stoi(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "grammar_bench: unknown flag %s (usage: the comment atop %s)\n",
                   a.c_str(), __FILE__);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  const std::string src = COURIER_SOURCE_DIR;
  if (tokenizers.empty()) {
    tokenizers = {src + "/tests/data/models/tiny-qwen3/tokenizer.json",
                  src + "/tests/data/tokenizers/llama3/tokenizer.json"};
  }
  if (bomb_mode) {
    // Compiles first, before the vocabulary is loaded: its freed pages would hide the growth
    // of the RSS. Then the mask fills of what compiled.
    const std::string only = files.empty() ? "" : files[0];
    run_bombs(only, nullptr);
    const auto tok = text::tokenizer::load(std::filesystem::is_directory(tokenizers[0])
                                               ? tokenizers[0] + "/tokenizer.json"
                                               : tokenizers[0]);
    const auto eos = tok.special_ids().eos ? *tok.special_ids().eos : 0;
    std::printf("mask fills on %s (%u ids)\n", tokenizers[0].c_str(), tok.id_bound());
    run_bombs(only, admission::grammar_vocabulary(tok, {eos}));
    return 0;
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
