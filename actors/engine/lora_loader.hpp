#pragma once
// LoRA adapters read at run time (msg::lora_change): each folder is read and checked on a
// thread of its own, so the engine's steps go on meanwhile; the thread then tells the engine
// (`notify`, which sends it a lora_parsed_atom with the job's id), and the engine takes the
// result and answers the request. Jobs in flight are joined at destruction.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "gpu/model/lora_adapter.hpp"

namespace courier::actors {

class lora_loader {
 public:
  struct result {
    std::string name;
    std::shared_ptr<const model::lora_adapter> adapter;  // null: failed
    std::string error;
  };
  explicit lora_loader(std::function<void(std::uint64_t)> notify) : notify_(std::move(notify)) {}
  ~lora_loader();
  lora_loader(const lora_loader&) = delete;
  lora_loader& operator=(const lora_loader&) = delete;

  // Starts reading `dir` as adapter `name` of `cfg`; returns the job's id.
  std::uint64_t start(const std::string& name, const std::string& dir, model::model_config cfg,
                      std::int32_t max_rank);
  // The finished job's result (once notified); nothing for an unknown id.
  std::optional<result> take(std::uint64_t id);

 private:
  std::function<void(std::uint64_t)> notify_;
  std::mutex mu_;
  std::map<std::uint64_t, result> done_;
  std::map<std::uint64_t, std::thread> threads_;
  std::uint64_t next_ = 1;
};

}  // namespace courier::actors
