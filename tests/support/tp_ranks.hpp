#pragma once
// Tensor parallelism on the sim: `size` sim devices joined to one thread group, each holding its
// rank's shard of a model folder, and a way to run every rank at once, one thread each.
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/sim/sim_collectives.hpp"

namespace courier::test {

struct tp_ranks {
  std::vector<std::shared_ptr<gpu::collectives>> group;
  std::vector<std::unique_ptr<gpu::device>> devs;
  std::vector<std::unique_ptr<model::llama_model>> models;

  // Throws model_error when the model cannot be split over `size` ranks.
  tp_ranks(const std::string& dir, int size, int threads_per_rank = 1)
      : group(gpu::sim::make_thread_group(size)) {
    for (int r = 0; r < size; ++r) {
      devs.push_back(gpu::make_sim_device(threads_per_rank, 1024));
      devs.back()->join_group(group[static_cast<std::size_t>(r)]);
      models.push_back(model::llama_model::load(dir, *devs.back()));
    }
  }

  int size() const { return static_cast<int>(models.size()); }

  // f(r) for every rank r on a thread of its own, all at once; rethrows the first failure once
  // every thread has returned (a failing rank aborts the group, so none waits for it forever).
  template <class F>
  void each(F&& f) {
    std::vector<std::exception_ptr> errors(models.size());
    std::vector<std::thread> threads;
    for (int r = 0; r < size(); ++r) {
      threads.emplace_back([&, r] {
        try {
          f(r);
        } catch (...) {
          errors[static_cast<std::size_t>(r)] = std::current_exception();
          group[static_cast<std::size_t>(r)]->abort("rank " + std::to_string(r) + " failed");
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }
};

}  // namespace courier::test
