#pragma once
// A model's vocabulary as grammars see it: each token id's bytes (what it adds to the decoded
// text, possibly part of a UTF-8 character), laid out as a byte trie in preorder so that a walk
// shares the work of common prefixes and skips a whole subtree when its prefix is refused.
//
// Tokens with no bytes and the ids listed as excluded (special tokens: a grammar never allows
// them) are not in the trie; the end-of-sequence ids are allowed exactly where the grammar can
// end. Built once per model and shared (immutable).
#include <cstdint>
#include <string>
#include <vector>

namespace courier::grammar {

class token_vocabulary {
 public:
  struct node {
    std::uint32_t subtree_end = 0;  // index just past this node's subtree (preorder)
    std::uint32_t ids_begin = 0;    // into token_ids(): the tokens spelled by this node's path
    std::uint16_t num_ids = 0;
    std::uint16_t depth = 0;        // bytes from the root; the root itself is not stored
    std::uint8_t byte = 0;          // the last byte of the path
  };

  // token_bytes[id] for every id below the id bound.
  token_vocabulary(std::vector<std::string> token_bytes, std::vector<std::uint32_t> eos_ids,
                   const std::vector<std::uint32_t>& excluded_ids);

  std::uint32_t id_bound() const { return static_cast<std::uint32_t>(bytes_.size()); }
  const std::string& bytes(std::uint32_t id) const { return bytes_[id]; }
  const std::vector<node>& nodes() const { return nodes_; }
  const std::vector<std::uint32_t>& token_ids() const { return ids_; }
  const std::vector<std::uint32_t>& eos_ids() const { return eos_; }
  std::size_t max_token_bytes() const { return max_bytes_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<node> nodes_;
  std::vector<std::uint32_t> ids_;
  std::vector<std::uint32_t> eos_;
  std::size_t max_bytes_ = 0;
};

}  // namespace courier::grammar
