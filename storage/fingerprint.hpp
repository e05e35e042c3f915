#pragma once
// A 64-bit fingerprint of what a persisted KV block depends on: the model's weights and config,
// its tokenizer, and the KV layout. Blocks the disk tier kept from a run whose fingerprint
// differs are dropped at start, never served.
//
// Files are hashed by their config and tokenizer text whole, and each weight file by its size,
// its safetensors header (every tensor's name, dtype, shape and offsets) and samples of its bytes
// (16 windows of 64 KB spread over the file): reading every weight would take minutes for a
// large model, and a changed checkpoint with the same shapes still differs in its samples.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/fnv1a.hpp"

namespace courier::storage {

class fingerprint : public base::fnv1a64 {
 public:
  using base::fnv1a64::add;
  // A file's bytes whole (config.json, tokenizer.json); a missing file adds its absence.
  void add_file(const std::string& path);
  // A safetensors file as described above; std::runtime_error when it cannot be read.
  void add_weights_file(const std::string& path);
};

// The fingerprint of a Hugging Face model folder (config.json, tokenizer files, every
// *.safetensors) and a layout description (block size, KV dtype, layers, heads...).
std::uint64_t model_fingerprint(const std::string& folder, const std::string& layout);

// What a folder's model computes (config.json and every *.safetensors), and what its tokenizer
// makes of text (tokenizer.json, tokenizer_config.json: the bytes of each): the shared lookup
// cache's scope names them, so that two models or tokenizers served under one name never share
// tokens.
std::uint64_t weights_fingerprint(const std::string& folder);
std::uint64_t tokenizer_fingerprint(const std::string& folder);

}  // namespace courier::storage
