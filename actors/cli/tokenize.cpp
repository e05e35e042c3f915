// courier tokenize / courier detokenize: a tokenizer.json on the command line, text or ids on
// stdin, the other on stdout. For checking a model's tokenizer by hand and in scripts.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::cli {

namespace {

constexpr const char* tokenize_help =
    "usage: courier tokenize --tokenizer FILE [--no-special] < text\n"
    "  reads UTF-8 text from stdin (all of it, byte for byte: a trailing newline is text too)\n"
    "  and prints its token ids as one JSON array.\n"
    "  --tokenizer FILE  a Hugging Face tokenizer.json (tokenizer_config.json beside it is\n"
    "                    read too when present)\n"
    "  --no-special      do not add the post-processor's special tokens (e.g. BOS)\n";

constexpr const char* detokenize_help =
    "usage: courier detokenize --tokenizer FILE [--skip-special] < ids.json\n"
    "  reads a JSON array of token ids from stdin and prints the decoded text (no newline\n"
    "  is added).\n"
    "  --tokenizer FILE  a Hugging Face tokenizer.json\n"
    "  --skip-special    leave special tokens out of the text\n";

std::string read_stdin() {
  std::string all;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) all.append(buf, n);
  if (std::ferror(stdin)) throw std::runtime_error("stdin: read error");
  return all;
}

std::vector<text::token_id> parse_ids(const std::string& input) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(input);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("stdin: invalid JSON: ") + e.what());
  }
  if (!j.is_array()) throw std::runtime_error("stdin: expected a JSON array of token ids");
  std::vector<text::token_id> ids;
  ids.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 0xFFFFFFFFULL) {
      throw std::runtime_error("stdin: expected token ids (integers 0..4294967295), got " +
                               v.dump());
    }
    ids.push_back(v.get<text::token_id>());
  }
  return ids;
}

}  // namespace

int run_tokenize(int argc, char** argv) {
  return run_command("tokenize", [&] {
    args a(argc, argv, 2, {"tokenizer"}, {"no-special", "help"});
    if (a.has("help")) {
      std::fputs(tokenize_help, stdout);
      return 0;
    }
    const auto path = a.get("tokenizer");
    if (!path) throw usage_error("--tokenizer is required");
    const auto tok = text::tokenizer::load(*path);
    const auto ids = tok.encode(read_stdin(), !a.has("no-special"));
    std::cout << nlohmann::json(ids).dump() << '\n';
    return std::cout.flush() ? 0 : 1;
  });
}

int run_detokenize(int argc, char** argv) {
  return run_command("detokenize", [&] {
    args a(argc, argv, 2, {"tokenizer"}, {"skip-special", "help"});
    if (a.has("help")) {
      std::fputs(detokenize_help, stdout);
      return 0;
    }
    const auto path = a.get("tokenizer");
    if (!path) throw usage_error("--tokenizer is required");
    const auto tok = text::tokenizer::load(*path);
    const auto ids = parse_ids(read_stdin());
    std::cout << tok.decode(ids, a.has("skip-special"));
    return std::cout.flush() ? 0 : 1;
  });
}

}  // namespace courier::cli
