#pragma once
// A move-only handle on references to pool blocks: a sequence's block table, the blocks a
// prefix lookup matched. Owning a block_refs means holding one reference on each listed block;
// destroying or release()-ing it drops exactly those references, once.
#include <cstddef>
#include <optional>
#include <vector>

#include "cache/block_pool.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// Invariants: each entry of ids() carries one reference held by this object and counted in the
// pool's reference count; an empty handle may have no pool. The pool must outlive the handle.
class block_refs {
 public:
  block_refs() = default;
  ~block_refs() { release(); }

  block_refs(const block_refs&) = delete;
  block_refs& operator=(const block_refs&) = delete;
  block_refs(block_refs&& other) noexcept;
  block_refs& operator=(block_refs&& other) noexcept;

  // n newly allocated blocks, or nothing when the pool has fewer than n free.
  [[nodiscard]] static std::optional<block_refs> allocate(block_pool& pool, std::size_t n);
  // New references on blocks that are already in use (shares them; e.g. forking a sequence).
  [[nodiscard]] static block_refs share(block_pool& pool, const std::vector<block_id>& blocks);

  const std::vector<block_id>& ids() const { return ids_; }
  block_id operator[](std::size_t i) const { return ids_[i]; }
  std::size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const block_pool* pool() const { return pool_; }

  // Takes over other's references, appended after ours; other ends empty. Same pool only.
  void append(block_refs&& other);
  // Moves entry i's reference onto `with`: one reference taken on `with`, the one on the old
  // block dropped (freeing it if this was its last holder).
  void replace(std::size_t i, block_id with);
  // Drops every reference; the handle ends empty. Idempotent.
  void release() noexcept;
  // Drops the references of the entries from n on (freeing blocks this was the last holder
  // of); keeps the first n. Nothing when size() <= n.
  void truncate(std::size_t n) noexcept;

  // Change tracking for a copy of the table kept elsewhere (the engine's copy of a sequence's
  // table, which the scheduler updates by differences): the number of leading entries
  // unchanged since the last mark_synced(). append keeps it, replace(i) lowers it to i,
  // truncate(n) to n, release and being moved from or to, to 0.
  std::size_t synced_prefix() const { return synced_; }
  void mark_synced() { synced_ = ids_.size(); }

 private:
  block_refs(block_pool& pool, std::vector<block_id> ids) : pool_(&pool), ids_(std::move(ids)) {}

  block_pool* pool_ = nullptr;  // Borrowed; outlives this handle.
  std::vector<block_id> ids_;
  std::size_t synced_ = 0;  // <= ids_.size()
};

}  // namespace courier::cache
