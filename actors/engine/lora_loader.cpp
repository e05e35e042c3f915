#include "actors/engine/lora_loader.hpp"

namespace courier::actors {

lora_loader::~lora_loader() {
  for (auto& [id, t] : threads_) {
    if (t.joinable()) t.join();
  }
}

std::uint64_t lora_loader::start(const std::string& name, const std::string& dir,
                                 model::model_config cfg, std::int32_t max_rank) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t id = next_++;
  threads_[id] = std::thread([this, id, name, dir, cfg = std::move(cfg), max_rank] {
    result r;
    r.name = name;
    try {
      r.adapter = model::load_lora_adapter(name, dir, cfg, max_rank);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      done_[id] = std::move(r);
    }
    notify_(id);
  });
  return id;
}

std::optional<lora_loader::result> lora_loader::take(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = done_.find(id);
  if (it == done_.end()) return std::nullopt;
  result r = std::move(it->second);
  done_.erase(it);
  auto t = threads_.find(id);
  if (t != threads_.end()) {
    if (t->second.joinable()) t->second.join();  // it has finished: notify_ was its last act
    threads_.erase(t);
  }
  return r;
}

}  // namespace courier::actors
