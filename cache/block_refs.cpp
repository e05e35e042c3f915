#include "cache/block_refs.hpp"

#include <stdexcept>
#include <utility>

namespace courier::cache {

block_refs::block_refs(block_refs&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), ids_(std::move(other.ids_)) {
  other.ids_.clear();
  other.synced_ = 0;
}

block_refs& block_refs::operator=(block_refs&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = std::exchange(other.pool_, nullptr);
    ids_ = std::move(other.ids_);
    other.ids_.clear();
    other.synced_ = 0;
    synced_ = 0;
  }
  return *this;
}

std::optional<block_refs> block_refs::allocate(block_pool& pool, std::size_t n) {
  std::optional<std::vector<block_id>> blocks = pool.allocate(n);
  if (!blocks) return std::nullopt;
  return block_refs(pool, std::move(*blocks));
}

block_refs block_refs::share(block_pool& pool, const std::vector<block_id>& blocks) {
  // Build the handle as we go, so that an inc_ref that throws leaves no reference behind.
  block_refs refs(pool, {});
  refs.ids_.reserve(blocks.size());
  for (block_id b : blocks) {
    pool.inc_ref(b);
    refs.ids_.push_back(b);
  }
  return refs;
}

void block_refs::append(block_refs&& other) {
  if (other.empty()) return;
  if (pool_ == nullptr) pool_ = other.pool_;
  if (pool_ != other.pool_) throw std::logic_error("block_refs::append across two pools");
  ids_.insert(ids_.end(), other.ids_.begin(), other.ids_.end());
  other.ids_.clear();
}

void block_refs::replace(std::size_t i, block_id with) {
  if (i >= ids_.size()) throw std::logic_error("block_refs::replace: index out of range");
  pool_->inc_ref(with);  // first, so that replacing a block by itself never frees it
  const block_id old = std::exchange(ids_[i], with);
  pool_->dec_ref(old);
  if (old != with && i < synced_) synced_ = i;
}

void block_refs::release() noexcept {
  // dec_ref throws only on a double free, a bug that must not go on: noexcept turns it into
  // std::terminate rather than a lost block.
  for (block_id b : ids_) pool_->dec_ref(b);
  ids_.clear();
  synced_ = 0;
}

void block_refs::truncate(std::size_t n) noexcept {
  while (ids_.size() > n) {
    pool_->dec_ref(ids_.back());
    ids_.pop_back();
  }
  if (synced_ > ids_.size()) synced_ = ids_.size();
}

}  // namespace courier::cache
