#pragma once
// The schema: one entry per config key (path, how its value is read and shown, its docs), the
// one list that config.cpp validates against and that generates the keys table of README.md
// and configs/default.yaml (config_reference.cpp).
#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "actors/config/config.hpp"

namespace courier::config {

// A key's docs: a few words for configs/default.yaml's comment, and the README's description
// (what the value means; its type, range and default are generated).
struct key_docs {
  std::string brief;
  std::string help;
};

struct key_spec {
  std::string path;
  bool is_map = false;  // its value is a map of its own (server.api_keys), not a section
  // Reads the node into the config, or throws values::value_error; null for the maps, which
  // the config builder reads itself (their entries have origins of their own).
  std::function<void(const YAML::Node&, server_config&)> apply;
  std::string type;   // as the keys table says it: int, number, bool, string, enum, ...
  std::string range;  // what is allowed, generated from the reader's bounds; may be empty
  std::function<std::string(const server_config&)> show;  // the key's value, as YAML
  key_docs docs;
};

// Every key, in the order of the keys table and configs/default.yaml (sections contiguous).
const std::vector<key_spec>& schema();

}  // namespace courier::config
