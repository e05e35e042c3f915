// courier grammar: compiles what a request's structured-output fields would (a JSON Schema,
// json_object, a regular expression or GBNF) and prints the GBNF or random sentences of it.
// For checking a schema before sending it, and for the tests that validate the sentences with
// an independent JSON Schema validator (tests/node).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "actors/admission/grammar_registry.hpp"
#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "grammar/compiled_grammar.hpp"
#include "grammar/random_walk.hpp"
#include "grammar/token_mask.hpp"

namespace courier::cli {

namespace {

constexpr const char* grammar_help =
    "usage: courier grammar (--json-schema FILE | --json-object | --regex PATTERN | --gbnf FILE)\n"
    "                       [--print-gbnf] [--samples N] [--seed S] [--max-tokens N]\n"
    "  Compiles the grammar as a request's response_format / guided_* field would (an error\n"
    "  exits 1 with its message), then prints:\n"
    "  --print-gbnf    the grammar in GBNF\n"
    "  --samples N     N random complete sentences, each one JSON string on its own line, drawn\n"
    "                  byte by byte (a walk that does not end within --max-tokens, default 400,\n"
    "                  is retried, at most 20 times per sentence); --seed S (default 1)\n";

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The spec a request's field would make (the schema in its own key order, as requests keep it).
admission::grammar_spec spec_of(const args& a) {
  using kind = admission::grammar_spec::kind;
  if (auto f = a.get("json-schema")) {
    const std::string text = read_whole_file(*f);
    if (nlohmann::ordered_json::parse(text, nullptr, false).is_discarded()) {
      throw std::runtime_error(*f + ": invalid JSON");
    }
    return {kind::json_schema, text, false};
  }
  if (a.has("json-object")) return {kind::json_object, "", false};
  if (auto r = a.get("regex")) return {kind::regex, *r, false};
  if (auto f = a.get("gbnf")) return {kind::gbnf, read_whole_file(*f), false};
  throw usage_error("one of --json-schema, --json-object, --regex, --gbnf is required");
}

}  // namespace

int run_grammar(int argc, char** argv) {
  return run_command("grammar", [&] {
    args a(argc, argv, 2, {"json-schema", "regex", "gbnf", "samples", "seed", "max-tokens"},
           {"json-object", "print-gbnf", "help"});
    if (a.has("help")) {
      std::fputs(grammar_help, stdout);
      return 0;
    }
    grammar::compile_budget budget;  // the server's default limits
    const std::string gbnf = admission::gbnf_of(spec_of(a), budget);
    const auto compiled = grammar::compile_gbnf(gbnf, budget);
    if (a.has("print-gbnf")) std::cout << gbnf;
    const long long samples = a.get_int("samples").value_or(0);
    grammar::mask_cache cache(compiled, grammar::byte_vocabulary());
    std::mt19937_64 rng(static_cast<std::uint64_t>(a.get_int("seed").value_or(1)));
    grammar::random_walk_options opts;
    opts.max_tokens = static_cast<std::size_t>(a.get_int("max-tokens").value_or(400));
    for (long long i = 0; i < samples; ++i) {
      std::optional<std::string> s;
      for (int attempt = 0; attempt < 20 && !s; ++attempt) s = grammar::random_sentence(cache, rng, opts);
      if (!s) throw std::runtime_error("no sentence ended within --max-tokens after 20 walks");
      std::cout << nlohmann::json(*s).dump() << '\n';
    }
    return std::cout.flush() ? 0 : 1;
  });
}

}  // namespace courier::cli
