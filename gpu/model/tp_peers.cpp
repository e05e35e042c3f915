#include "gpu/model/tp_peers.hpp"

#include <exception>
#include <future>
#include <stdexcept>

namespace courier::model {

// One peer's thread and the tasks it runs in order.
struct tp_peers::worker {
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  bool stop = false;
  std::thread thread;

  worker() {
    thread = std::thread([this] {
      for (;;) {
        std::function<void()> task;
        {
          std::unique_lock<std::mutex> lock(m);
          cv.wait(lock, [&] { return stop || !tasks.empty(); });
          if (tasks.empty()) return;  // stopped, nothing left
          task = std::move(tasks.front());
          tasks.pop_front();
        }
        task();  // tasks catch their own failures
      }
    });
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(m);
      tasks.push_back(std::move(task));
    }
    cv.notify_one();
  }
  ~worker() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_one();
    thread.join();
  }
};

tp_peers::tp_peers(std::vector<rank> ranks, std::vector<std::shared_ptr<gpu::collectives>> group)
    : ranks_(std::move(ranks)), group_(std::move(group)) {
  if (group_.size() != ranks_.size() + 1) {
    throw std::invalid_argument("tp_peers: the group must have one end per rank, rank 0's too");
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) workers_.push_back(std::make_unique<worker>());
}

tp_peers::~tp_peers() {
  abort("the tensor-parallel group is shutting down");
  workers_.clear();  // joins: the tasks left fail fast on the aborted group
}

namespace {

// Waits for every rank's future, then rethrows `first` (rank 0's failure), else the first
// rank's in rank order; returns when none failed.
void wait_all(std::vector<std::future<void>>& ranks, std::exception_ptr first) {
  for (auto& f : ranks) {
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace

void tp_peers::abort(const std::string& why) {
  for (const auto& c : group_) c->abort(why);
}

void tp_peers::run(const std::function<void(rank&)>& peer, const std::function<void()>& lead) {
  std::vector<std::future<void>> done;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto task = std::make_shared<std::packaged_task<void()>>([this, i, &peer] {
      try {
        ranks_[i].dev->bind_thread();
        peer(ranks_[i]);
      } catch (const std::exception& e) {
        abort(std::string("rank ") + std::to_string(i + 1) + " failed: " + e.what());
        throw;
      }
    });
    done.push_back(task->get_future());
    workers_[i]->post([task] { (*task)(); });
  }
  std::exception_ptr first;
  try {
    lead();
  } catch (const std::exception& e) {
    abort(std::string("rank 0 failed: ") + e.what());
    first = std::current_exception();
  }
  wait_all(done, first);
}

launched_forward tp_peers::launch(llama_model& lead, kv_cache& cache, const forward_batch& batch,
                                  const mask_filler& fill) {
  {
    std::lock_guard<std::mutex> lock(failed_mu_);
    if (!failed_.empty()) throw std::runtime_error(failed_);
  }
  // A malformed batch is refused here, before any rank starts: every rank would refuse it the
  // same way, and the group stays usable. Any failure past this point aborts the group.
  lead.validate(batch, cache);
  // Rank 0's masks, for the peers: set once rank 0 has filled them (or failed before).
  auto masks = std::make_shared<std::promise<std::vector<std::uint32_t>>>();
  std::shared_future<std::vector<std::uint32_t>> peer_masks = masks->get_future().share();
  bool masks_set = false;
  mask_filler lead_fill, peer_fill;
  if (fill) {
    lead_fill = [&](std::vector<std::uint32_t>& words) {
      fill(words);
      masks->set_value(words);
      masks_set = true;
    };
    peer_fill = [peer_masks](std::vector<std::uint32_t>& words) { words = peer_masks.get(); };
  }
  launched_forward out;
  std::vector<std::future<void>> launched;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto enqueued = std::make_shared<std::promise<void>>();
    launched.push_back(enqueued->get_future());
    workers_[i]->post([this, i, &batch, peer_fill, enqueued] {
      rank& r = ranks_[i];
      launched_forward step;
      try {
        r.dev->bind_thread();
        step = r.model->launch(batch, *r.cache, peer_fill);
      } catch (const std::exception& e) {
        abort(std::string("rank ") + std::to_string(i + 1) + " failed: " + e.what());
        enqueued->set_exception(std::current_exception());
        return;
      }
      enqueued->set_value();  // rank 0 may let the batch go once every rank is here
      try {
        step.finish();
      } catch (const std::exception& e) {
        const std::string why = std::string("rank ") + std::to_string(i + 1) + " failed: " + e.what();
        abort(why);
        std::lock_guard<std::mutex> lock(failed_mu_);
        if (failed_.empty()) failed_ = why;
      }
    });
  }
  std::exception_ptr first;
  try {
    out = lead.launch(batch, cache, lead_fill);
  } catch (const std::exception& e) {
    abort(std::string("rank 0 failed: ") + e.what());
    first = std::current_exception();
  }
  if (fill && !masks_set) {  // rank 0 failed before its masks: no peer waits for them
    masks->set_exception(std::make_exception_ptr(std::runtime_error("rank 0 failed")));
  }
  wait_all(launched, first);
  return out;
}

}  // namespace courier::model
