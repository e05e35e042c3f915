#pragma once
// The model a caller steps, whatever its parallelism: one model on one device, or rank 0 of a
// tensor-parallel group whose other ranks (tp_peers) do every call at once on their threads.
// The engine calls this alone: each call here is made on every rank (a launch, an adapter
// load, state and KV block copies), and it answers with rank 0's result. Borrows what it is
// given: the model, its cache and the peers outlive it.
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/tp_peers.hpp"

namespace courier::model {

class model_group {
 public:
  // peers: null for one device.
  model_group(llama_model& lead, kv_cache& cache, tp_peers* peers)
      : lead_(lead), cache_(cache), peers_(peers) {}

  const model_config& config() const { return lead_.config(); }
  std::int32_t num_ranks() const { return peers_ ? peers_->size() + 1 : 1; }

  // llama_model::launch on every rank (tp_peers::launch); rank 0's output.
  launched_forward launch(const forward_batch& batch, const mask_filler& fill);
  void load_lora(std::int32_t slot, const lora_adapter& adapter);
  void copy_states(const std::vector<state_copy>& copies);
  // kv_cache::copy_block for each copy, in order, on every rank's cache.
  struct block_copy {
    std::int32_t block = -1;
    std::int32_t host_block = -1;
    bool to_host = false;
  };
  void copy_blocks(const std::vector<block_copy>& copies);
  // kv_cache::copy_blocks_async on every rank's cache: done once every rank's are (wait()
  // throws the first rank's failure, after waiting for all of them).
  std::shared_ptr<gpu::pending_copies> copy_blocks_async(
      const std::vector<kv_cache::host_copy>& copies);

 private:
  llama_model& lead_;
  kv_cache& cache_;
  tp_peers* peers_;
};

}  // namespace courier::model
