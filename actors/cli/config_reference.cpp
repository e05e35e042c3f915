// courier config-reference: prints what the config schema generates, docs/config-keys.md
// (default) or configs/default.yaml (--yaml); scripts/gen-config-docs.sh writes them there.
#include <cstring>
#include <iostream>

#include "actors/cli/commands.hpp"
#include "actors/config/config.hpp"

namespace courier::cli {

int run_config_reference(int argc, char** argv) {
  const bool yaml = argc == 3 && !std::strcmp(argv[2], "--yaml");
  if (argc > 3 || (argc == 3 && !yaml)) {
    std::cerr << "usage: courier config-reference [--yaml]\n"
                 "  prints the config keys table (Markdown), or with --yaml the default config\n";
    return argc == 3 && !std::strcmp(argv[2], "--help") ? 0 : 2;
  }
  std::cout << (yaml ? config::default_config_yaml() : config::config_keys_markdown());
  return 0;
}

}  // namespace courier::cli
