#include "grammar/token_vocabulary.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace courier::grammar {

token_vocabulary::token_vocabulary(std::vector<std::string> token_bytes,
                                   std::vector<std::uint32_t> eos_ids,
                                   const std::vector<std::uint32_t>& excluded_ids)
    : bytes_(std::move(token_bytes)), eos_(std::move(eos_ids)) {
  std::vector<char> excluded(bytes_.size(), 0);
  for (std::uint32_t id : excluded_ids) {
    if (id < excluded.size()) excluded[id] = 1;
  }
  for (std::uint32_t id : eos_) {
    if (id < excluded.size()) excluded[id] = 1;
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t id = 0; id < bytes_.size(); ++id) {
    if (!excluded[id] && !bytes_[id].empty()) order.push_back(id);
  }
  std::sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) {
    return bytes_[a] != bytes_[b] ? bytes_[a] < bytes_[b] : a < b;
  });
  // Preorder: a node is emitted when its prefix first appears, its subtree closes when a
  // later token no longer shares that prefix.
  std::vector<std::uint32_t> path;  // node index per depth - 1
  std::string previous;
  auto close_to = [&](std::size_t depth) {
    while (path.size() > depth) {
      nodes_[path.back()].subtree_end = static_cast<std::uint32_t>(nodes_.size());
      path.pop_back();
    }
  };
  for (std::uint32_t id : order) {
    const std::string& b = bytes_[id];
    if (b.size() > std::numeric_limits<std::uint16_t>::max()) {
      throw std::invalid_argument("token_vocabulary: a token longer than 65535 bytes");
    }
    max_bytes_ = std::max(max_bytes_, b.size());
    std::size_t lcp = 0;
    while (lcp < b.size() && lcp < previous.size() && b[lcp] == previous[lcp]) ++lcp;
    close_to(lcp);
    for (std::size_t d = lcp; d < b.size(); ++d) {
      node n;
      n.depth = static_cast<std::uint16_t>(d + 1);
      n.byte = static_cast<std::uint8_t>(b[d]);
      path.push_back(static_cast<std::uint32_t>(nodes_.size()));
      nodes_.push_back(n);
    }
    node& end = nodes_[path.back()];
    if (end.num_ids == 0) end.ids_begin = static_cast<std::uint32_t>(ids_.size());
    if (end.num_ids == std::numeric_limits<std::uint16_t>::max()) {
      throw std::invalid_argument("token_vocabulary: too many tokens with the same bytes");
    }
    ++end.num_ids;
    ids_.push_back(id);
    previous = b;
  }
  close_to(0);
}

}  // namespace courier::grammar
