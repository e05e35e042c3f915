// The composition root: `courier <command> ...`.
#include <cstdio>
#include <cstring>
#include <string>

#include "actors/cli/commands.hpp"

namespace {

void print_usage() {
  std::fputs(
      "usage: courier <command> [options]\n"
      "commands:\n"
      "  serve          the OpenAI-compatible HTTP server\n"
      "  generate       run a model on token-id prompts and print one JSON line per request\n"
      "  bench-forward  print forward-pass tokens/s for prefill and decode\n"
      "  tokenize       UTF-8 text on stdin -> JSON array of token ids\n"
      "  detokenize     JSON array of token ids on stdin -> text\n"
      "  render-chat    render a chat template with a JSON context\n"
      "  grammar        compile a JSON Schema, regex or GBNF grammar; print it or samples\n"
      "  config-reference  print every config key (Markdown table), or --yaml the default config\n"
      "run 'courier <command> --help' for a command's options\n",
      stderr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "generate") return courier::cli::run_generate(argc, argv);
  if (cmd == "bench-forward") return courier::cli::run_bench_forward(argc, argv);
  if (cmd == "serve") return courier::cli::run_serve(argc, argv);
  if (cmd == "tokenize") return courier::cli::run_tokenize(argc, argv);
  if (cmd == "detokenize") return courier::cli::run_detokenize(argc, argv);
  if (cmd == "render-chat") return courier::cli::run_render_chat(argc, argv);
  if (cmd == "grammar") return courier::cli::run_grammar(argc, argv);
  if (cmd == "config-reference") return courier::cli::run_config_reference(argc, argv);
  std::fprintf(stderr, "courier: unknown command '%s'\n", cmd.c_str());
  print_usage();
  return 2;
}
