#pragma once
// The ids the cache speaks in (docs/ARCHITECTURE.md, "Folders and their contracts") and a
// read-only view of tokens.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace courier::cache {

using token_id = std::uint32_t;

// A KV block: one page of block_size token slots per layer. A strong type so that a block id is
// never mixed up with a count, an index or a token.
struct block_id {
  std::int32_t value = -1;

  friend bool operator==(block_id a, block_id b) { return a.value == b.value; }
  friend bool operator!=(block_id a, block_id b) { return a.value != b.value; }
  friend bool operator<(block_id a, block_id b) { return a.value < b.value; }
  friend bool operator>(block_id a, block_id b) { return a.value > b.value; }
  friend bool operator<=(block_id a, block_id b) { return a.value <= b.value; }
  friend bool operator>=(block_id a, block_id b) { return a.value >= b.value; }
};

struct block_id_hash {
  std::size_t operator()(block_id b) const noexcept { return std::hash<std::int32_t>()(b.value); }
};

// A borrowed, read-only run of tokens (C++17 has no std::span). Borrowed from its caller: it
// must not outlive the tokens it points into.
class token_span {
 public:
  token_span() = default;
  token_span(const token_id* data, std::size_t size) : data_(data), size_(size) {}
  token_span(const std::vector<token_id>& tokens)  // NOLINT: implicit on purpose
      : data_(tokens.data()), size_(tokens.size()) {}

  const token_id* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  token_id operator[](std::size_t i) const { return data_[i]; }
  const token_id* begin() const { return data_; }
  const token_id* end() const { return data_ + size_; }

  // The first n tokens (all of them when n >= size()).
  token_span first(std::size_t n) const { return {data_, n < size_ ? n : size_}; }
  // The tokens from `offset` on (none when offset >= size()).
  token_span from(std::size_t offset) const {
    return offset < size_ ? token_span{data_ + offset, size_ - offset} : token_span{};
  }

 private:
  const token_id* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace courier::cache

namespace std {
template <>
struct hash<courier::cache::block_id> : courier::cache::block_id_hash {};
}  // namespace std
