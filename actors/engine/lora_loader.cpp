#include "actors/engine/lora_loader.hpp"

#include <thread>

namespace courier::actors {

struct lora_loader::shared {
  std::mutex mu;
  std::function<void(std::uint64_t)> notify;  // empty once the loader is gone
  std::map<std::uint64_t, result> done;
  std::uint64_t next = 1;
};

lora_loader::lora_loader(std::function<void(std::uint64_t)> notify)
    : state_(std::make_shared<shared>()) {
  state_->notify = std::move(notify);
}

lora_loader::~lora_loader() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->notify = nullptr;  // a job still reading finishes unheard
}

std::uint64_t lora_loader::start(const std::string& name, const std::string& dir,
                                 model::model_config cfg, std::int32_t max_rank, read_fn read) {
  std::lock_guard<std::mutex> lock(state_->mu);
  const std::uint64_t id = state_->next++;
  std::thread([st = state_, id, name, dir, cfg = std::move(cfg), max_rank, read = std::move(read)] {
    result r;
    r.name = name;
    try {
      r.adapter = read(name, dir, cfg, max_rank);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    std::lock_guard<std::mutex> l(st->mu);  // held while notifying: the loader waits to go
    if (!st->notify) return;
    st->done[id] = std::move(r);
    st->notify(id);
  }).detach();
  return id;
}

std::optional<lora_loader::result> lora_loader::take(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->done.find(id);
  if (it == state_->done.end()) return std::nullopt;
  result r = std::move(it->second);
  state_->done.erase(it);
  return r;
}

}  // namespace courier::actors
