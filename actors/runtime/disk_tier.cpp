#include "actors/runtime/disk_tier.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "actors/engine/engine_actor.hpp"
#include "gpu/model/tp_peers.hpp"
#include "storage/fingerprint.hpp"

namespace courier::actors {

std::optional<disk_tier> open_disk_tier(const config::server_config& cfg,
                                        const engine_resources& res) {
  const config::cache_section& c = cfg.cache;
  if (c.disk_tier_gb <= 0 || c.disk_tier_path.empty() || !res.cache ||
      res.cache->host_blocks() == 0) {
    return std::nullopt;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(c.disk_tier_path, ec);
  if (ec || !fs::is_directory(c.disk_tier_path)) {
    throw std::runtime_error(
        fmt::format("cache.disk_tier_path: {} is not a folder courier can "
                    "use{}",
                    c.disk_tier_path, ec ? ": " + ec.message() : ""));
  }
  const model::model_config& mc = res.model->config();
  // A slot holds every tensor-parallel rank's host block, in rank order.
  const std::size_t rank_bytes = res.cache->host_block_bytes();
  const std::int32_t ranks = res.peers ? res.peers->size() + 1 : 1;
  const std::size_t block_bytes = rank_bytes * static_cast<std::size_t>(ranks);
  const std::int32_t bs = res.cache->block_size();
  // What a block's bytes depend on besides the weights: a block of another layout is dropped.
  const std::string layout = fmt::format(
      "courier-kv 1 {} block_size={} kv_layers={} kv_heads={} head_dim={} dtype={} bytes={}{}",
      mc.architecture_name, bs, mc.kv_layers(), mc.num_kv_heads, mc.head_dim,
      gpu::dtype_name(res.dev->compute_dtype()), block_bytes,
      ranks > 1 ? fmt::format(" tensor_parallel={}", ranks) : std::string());
  storage::disk_file_options o;
  o.path = (fs::path(c.disk_tier_path) / "courier-kv.blocks").string();
  o.block_bytes = block_bytes;
  o.block_size = bs;
  o.num_slots =
      static_cast<std::int64_t>(c.disk_tier_gb * double(1ULL << 30) /
                                double(storage::disk_block_file::slot_bytes_for(block_bytes, bs)));
  if (o.num_slots <= 0) {
    throw std::runtime_error(fmt::format("cache.disk_tier_gb: {} GB holds no block of {} bytes",
                                         c.disk_tier_gb, block_bytes));
  }
  o.fingerprint = storage::model_fingerprint(cfg.model.path, layout);
  o.persist = c.disk_tier_persist;
  disk_tier t;
  try {
    t.io.file = std::make_shared<storage::disk_block_file>(o);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cache.disk_tier_path: ") + e.what());
  }
  t.io.hosts.push_back(res.cache->host_memory());
  for (std::int32_t r = 0; r + 1 < ranks; ++r) {
    t.io.hosts.push_back(res.peers->at(r).cache->host_memory());
  }
  t.io.block_bytes = rank_bytes;
  t.io.num_host_blocks = res.cache->host_blocks();
  t.io.io_threads = c.disk_tier_io_threads;
  t.slots.num_slots = o.num_slots;
  storage::disk_block_file::scan_counts dropped;
  for (storage::disk_block_file::restored& r : t.io.file->scan(dropped)) {
    t.slots.restored.push_back({r.slot, r.key.hash, r.key.parent, std::move(r.key.tokens)});
  }
  std::fprintf(stderr, "courier: KV disk tier: %lld blocks (%.2f GB) in %s, %s I/O%s\n",
               static_cast<long long>(o.num_slots), c.disk_tier_gb, o.path.c_str(),
               t.io.file->direct() ? "direct" : "buffered",
               o.persist
                   ? fmt::format(", {} blocks kept from before", t.slots.restored.size()).c_str()
                   : "");
  if (dropped.other_fingerprint + dropped.damaged > 0) {
    std::fprintf(stderr,
                 "courier: warning: KV disk tier: dropped %lld blocks of another model, tokenizer "
                 "or layout and %lld damaged or cut off in %s\n",
                 static_cast<long long>(dropped.other_fingerprint),
                 static_cast<long long>(dropped.damaged), o.path.c_str());
  }
  return t;
}

}  // namespace courier::actors
