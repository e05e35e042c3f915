#include "gpu/model/model_group.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>

namespace courier::model {

namespace {

// Copies on several ranks' streams: done once every part is.
class all_copies final : public gpu::pending_copies {
 public:
  explicit all_copies(std::vector<std::shared_ptr<gpu::pending_copies>> parts)
      : parts_(std::move(parts)) {}
  bool ready() override {
    return std::all_of(parts_.begin(), parts_.end(),
                       [](const std::shared_ptr<gpu::pending_copies>& p) { return p->ready(); });
  }
  void wait() override {
    std::exception_ptr first;
    for (const auto& p : parts_) {  // every part waited for, even past a failed one
      try {
        p->wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  std::vector<std::shared_ptr<gpu::pending_copies>> parts_;
};

}  // namespace

launched_forward model_group::launch(const forward_batch& batch, const mask_filler& fill) {
  return peers_ ? peers_->launch(lead_, cache_, batch, fill) : lead_.launch(batch, cache_, fill);
}

void model_group::load_lora(std::int32_t slot, const lora_adapter& adapter) {
  if (!peers_) return lead_.load_lora(slot, adapter);
  peers_->run([&](tp_peers::rank& r) { r.model->load_lora(slot, adapter); },
              [&] { lead_.load_lora(slot, adapter); });
}

void model_group::copy_states(const std::vector<state_copy>& copies) {
  if (!peers_) return lead_.copy_states(copies);
  peers_->run([&](tp_peers::rank& r) { r.model->copy_states(copies); },
              [&] { lead_.copy_states(copies); });
}

void model_group::copy_blocks(const std::vector<block_copy>& copies) {
  auto on = [&](kv_cache& cache) {
    for (const block_copy& c : copies) cache.copy_block(c.block, c.host_block, c.to_host);
  };
  if (!peers_) return on(cache_);
  peers_->run([&](tp_peers::rank& r) { on(*r.cache); }, [&] { on(cache_); });
}

std::shared_ptr<gpu::pending_copies> model_group::copy_blocks_async(
    const std::vector<kv_cache::host_copy>& copies) {
  if (!peers_) return cache_.copy_blocks_async(copies);
  std::vector<std::shared_ptr<gpu::pending_copies>> ranks(static_cast<std::size_t>(num_ranks()));
  std::mutex mu;  // the peers' threads each add theirs
  std::size_t next = 1;
  peers_->run(
      [&](tp_peers::rank& r) {
        auto pending = r.cache->copy_blocks_async(copies);
        const std::lock_guard<std::mutex> lock(mu);
        ranks[next++] = std::move(pending);
      },
      [&] { ranks[0] = cache_.copy_blocks_async(copies); });
  return std::make_shared<all_copies>(std::move(ranks));
}

}  // namespace courier::model
