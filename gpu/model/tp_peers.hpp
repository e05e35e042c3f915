#pragma once
// The ranks of a tensor-parallel model beyond rank 0, each stepping what rank 0 steps, on a
// thread of its own. The caller keeps rank 0 (its device, model shard and KV cache) and runs it
// on its own thread as with one device (the engine's); run() and launch() have every peer do the
// same at once, which the collectives inside the forward pass need: a rank's all-reduce waits
// for every rank's. Peers' outputs equal rank 0's (the same gathered logits, sampled with the
// same seeds) and are dropped.
//
// A malformed batch is refused before any rank starts (std::invalid_argument, as on one
// device). Any other failure on any rank aborts the group (gpu::collectives::abort), so that no rank waits
// forever for one that is gone: every later collective fails too, and so does every later step.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu/collectives.hpp"
#include "gpu/device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"

namespace courier::model {

class tp_peers {
 public:
  struct rank {
    std::unique_ptr<gpu::device> dev;
    std::unique_ptr<llama_model> model;
    std::unique_ptr<kv_cache> cache;
  };
  // `ranks` are ranks 1..N-1 (rank 0's device joined group[0]); `group` every rank's end.
  tp_peers(std::vector<rank> ranks, std::vector<std::shared_ptr<gpu::collectives>> group);
  // Aborts the group (a peer waiting in a collective for rank 0 returns), then joins.
  ~tp_peers();
  tp_peers(const tp_peers&) = delete;
  tp_peers& operator=(const tp_peers&) = delete;

  std::int32_t size() const { return static_cast<std::int32_t>(ranks_.size()); }  // peers
  rank& at(std::int32_t i) { return ranks_.at(static_cast<std::size_t>(i)); }

  // peer(r) on every peer at once while the caller runs lead(); returns once all have. Rethrows
  // rank 0's failure, else the first peer's.
  void run(const std::function<void(rank&)>& peer, const std::function<void()>& lead);

  // lead.launch(batch, cache, fill) on rank 0 and the same batch on every peer. Returns once
  // every rank has enqueued the step (the batch may go then); each peer finishes its output on
  // its thread and drops it. The peers' allowed-token masks are rank 0's: `fill` runs once.
  // Throws a peer's failure of an earlier step, if one failed after its launch returned.
  launched_forward launch(llama_model& lead, kv_cache& cache, const forward_batch& batch,
                          const mask_filler& fill);

 private:
  struct worker;
  void abort(const std::string& why);

  std::vector<rank> ranks_;
  std::vector<std::shared_ptr<gpu::collectives>> group_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::mutex failed_mu_;
  std::string failed_;  // a peer's failure after its launch returned (empty: none)
};

}  // namespace courier::model
