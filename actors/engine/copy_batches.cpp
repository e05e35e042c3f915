#include "actors/engine/copy_batches.hpp"

#include <exception>
#include <utility>
#include <vector>

namespace courier::actors {

void copy_batches::launch(const msg::step_plan& plan, const enqueuer& enqueue) {
  if (plan.async_copies.empty()) return;
  entry& e = batches_[plan.copy_batch];
  std::vector<model::kv_cache::host_copy> copies;
  copies.reserve(plan.async_copies.size());
  for (const msg::block_copy& c : plan.async_copies) {
    copies.push_back({c.block, c.host_block, c.to_host});
  }
  try {
    e.copies = enqueue(copies);
  } catch (const std::exception& ex) {
    e.copies = nullptr;
    e.error = ex.what();
  }
}

void copy_batches::fail(std::uint64_t batch, const std::string& why) {
  entry& e = batches_[batch];
  e.copies = nullptr;
  e.error = why;
}

void copy_batches::wait(std::uint64_t batch, promise p) {
  const auto it = batches_.find(batch);
  if (it == batches_.end()) {
    p.deliver(msg::copies_done{batch, false, "no copies were launched for this batch"});
    return;
  }
  entry& e = it->second;
  e.waiting = std::move(p);
  if (!e.copies || e.copies->ready()) {
    answer(batch, e);
    return;
  }
  if (!e.watched) {
    e.watched = true;
    waiter_.post([copies = e.copies, batch, n = notify_] {
      try {
        copies->wait();
      } catch (const std::exception&) {
        // answer() sees the failure again through wait()
      }
      n(batch);
    });
  }
}

void copy_batches::on_done(std::uint64_t batch) {
  const auto it = batches_.find(batch);
  if (it != batches_.end() && it->second.waiting) answer(batch, it->second);
}

void copy_batches::answer(std::uint64_t batch, entry& e) {
  msg::copies_done d{batch, e.copies != nullptr, e.error};
  if (e.copies) {
    try {
      e.copies->wait();
    } catch (const std::exception& ex) {
      d.ok = false;
      d.error = ex.what();
    }
  }
  e.waiting->deliver(std::move(d));
  batches_.erase(batch);
}

}  // namespace courier::actors
