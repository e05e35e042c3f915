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
      "  generate       run a model on token-id prompts and print one JSON line per request\n"
      "  bench-forward  print forward-pass tokens/s for prefill and decode\n"
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
  std::fprintf(stderr, "courier: unknown command '%s'\n", cmd.c_str());
  print_usage();
  return 2;
}
