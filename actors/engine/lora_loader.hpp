#pragma once
// LoRA adapters read at run time (msg::lora_change): each folder is read and checked on a
// thread of its own, so the engine's steps go on meanwhile; the thread then tells the engine
// (`notify`, which sends it a lora_parsed_atom with the job's id), and the engine takes the
// result and answers the request. The reads touch only regular files of bounded size
// (model::load_lora_adapter), but a file system can still hang: the loader never waits for a
// job. Its threads are detached and share their state with it; at destruction it stops
// notifying, and a job still reading finishes later into state only it holds then.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gpu/model/lora_adapter.hpp"

namespace courier::actors {

class lora_loader {
 public:
  struct result {
    std::string name;
    std::shared_ptr<const model::lora_adapter> adapter;  // null: failed
    std::string error;
  };
  using read_fn = std::function<std::shared_ptr<const model::lora_adapter>(
      const std::string& name, const std::string& dir, const model::model_config& cfg,
      std::int32_t max_rank)>;
  explicit lora_loader(std::function<void(std::uint64_t)> notify);
  ~lora_loader();
  lora_loader(const lora_loader&) = delete;
  lora_loader& operator=(const lora_loader&) = delete;

  // Starts reading `dir` as adapter `name` of `cfg` with `read`; returns the job's id.
  std::uint64_t start(const std::string& name, const std::string& dir, model::model_config cfg,
                      std::int32_t max_rank, read_fn read);
  // The finished job's result (once notified); nothing for an unknown id.
  std::optional<result> take(std::uint64_t id);

 private:
  struct shared;  // what the threads and the loader share
  std::shared_ptr<shared> state_;
};

}  // namespace courier::actors
