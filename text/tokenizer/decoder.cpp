#include "text/tokenizer/decoder.hpp"

namespace courier::text {

decoder::decoder(const std::vector<std::string>& bytes, std::vector<char> special)
    : special_(std::move(special)) {
  special_.resize(bytes.size(), 0);
  std::size_t total = 0;
  for (const std::string& b : bytes) total += b.size();
  arena_.reserve(total);
  offsets_.reserve(bytes.size() + 1);
  for (const std::string& b : bytes) {
    offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
    arena_ += b;
  }
  offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
}

void decoder::append_bytes(const std::uint32_t* ids, std::size_t num_ids, bool skip_special,
                           std::string& out) const {
  for (std::size_t i = 0; i < num_ids; ++i) {
    if (skip_special && is_special(ids[i])) continue;
    out += bytes(ids[i]);
  }
}

}  // namespace courier::text
