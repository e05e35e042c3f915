#pragma once
// The KV tiers' copies on the device's copy stream (msg::step_plan::async_copies), by batch:
// enqueued when their plan launches, and answered to the scheduler's copies_wait once the device
// has done them. A thread of its own waits on the device for them (not the step completion
// waiter: a long batch must not hold back the answers of the steps running beside it).
#include <caf/typed_response_promise.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/job_lane.hpp"
#include "gpu/device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

class copy_batches {
 public:
  using promise = caf::typed_response_promise<msg::copies_done>;
  // Called with a batch id on the waiter's thread once that batch is done: tells the engine
  // (copies_done_atom), which then calls on_done.
  using notify = std::function<void(std::uint64_t)>;

  explicit copy_batches(notify n) : notify_(std::move(n)) {}

  // Enqueues the plan's async copies through `enqueue` (model::model_group::copy_blocks_async:
  // on every tensor-parallel rank's cache) after its block_copies. Never throws: a failure is
  // kept as the batch's answer.
  using enqueuer = std::function<std::shared_ptr<gpu::pending_copies>(
      const std::vector<model::kv_cache::host_copy>&)>;
  void launch(const msg::step_plan& plan, const enqueuer& enqueue);
  // A plan whose batch was not launched (its step failed first): answered failed with `why`.
  void fail(std::uint64_t batch, const std::string& why);
  bool known(std::uint64_t batch) const { return batches_.count(batch) > 0; }
  // copies_wait: delivered at once when the batch is done, failed or unknown; else kept until
  // on_done.
  void wait(std::uint64_t batch, promise p);
  void on_done(std::uint64_t batch);

 private:
  struct entry {
    std::shared_ptr<gpu::pending_copies> copies;  // null: failed (error says why)
    std::string error;
    std::optional<promise> waiting;
    bool watched = false;
  };
  void answer(std::uint64_t batch, entry& e);

  notify notify_;
  std::map<std::uint64_t, entry> batches_;  // launched and not yet answered
  base::job_lane waiter_{"courier-copies", 1};  // last: joins before the batches it may hold go
};

}  // namespace courier::actors
