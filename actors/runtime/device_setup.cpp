#include "actors/runtime/device_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "gpu/model/kv_cache.hpp"
#include "gpu/sim/sim_collectives.hpp"
#ifdef COURIER_HAVE_CUDA
#include "gpu/cuda/arch_support.hpp"
#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#ifdef COURIER_HAVE_NCCL
#include "gpu/cuda/nccl_collectives.hpp"
#endif
#endif

namespace courier::actors {

std::unique_ptr<gpu::device> make_device(const config::server_config& cfg) {
#ifdef COURIER_HAVE_CUDA
  const bool gpu_present = gpu::cuda::has_device();
  if (cfg.device.backend == "cuda" && !gpu_present) {
    throw std::runtime_error("device.backend: cuda: no CUDA GPU is visible to this process");
  }
  if (cfg.device.backend == "cuda" || (cfg.device.backend == "auto" && gpu_present)) {
    const int gpu = cfg.device.index;
    if (gpu >= gpu::cuda::visible_gpus()) {
      throw std::runtime_error(fmt::format("device.index: {}: this process sees {} GPUs", gpu,
                                           gpu::cuda::visible_gpus()));
    }
    int major = 0, minor = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, gpu));
    const gpu::cuda::arch_verdict v = gpu::cuda::kernels_run_on(
        major, minor, gpu::cuda::built_archs(), gpu::cuda::built_ptx());
    if (v.runs) {
      if (v.jit) std::fprintf(stderr, "courier: GPU %d: %s\n", gpu, v.detail.c_str());
      gpu::cuda::cuda_options options;
      options.gemm_autotune = cfg.engine.gemm_autotune;
      return gpu::cuda::make_cuda_device(gpu, options);
    }
    if (cfg.device.backend == "cuda") {
      throw std::runtime_error(fmt::format("device.backend: cuda: GPU {}: {}", gpu, v.detail));
    }
    std::fprintf(stderr,
                 "courier: warning: GPU %d: %s; device.backend auto runs the simulated GPU "
                 "instead\n",
                 gpu, v.detail.c_str());
  }
#else
  if (cfg.device.backend == "cuda") {
    throw std::runtime_error(
        "device.backend: cuda: this build has no CUDA backend (nvcc was not found at build "
        "time); use device.backend=sim");
  }
#endif
  // "auto" without a GPU the kernels run on: the simulated GPU.
  return gpu::make_sim_device(cfg.device.sim.threads,
                              static_cast<std::size_t>(cfg.device.sim.memory_mb),
                              cfg.device.sim.copy_latency_ms * 1000);
}

std::vector<std::unique_ptr<gpu::device>> make_devices(
    const config::server_config& cfg, std::vector<std::shared_ptr<gpu::collectives>>& group) {
  std::vector<std::unique_ptr<gpu::device>> devs;
  const std::int32_t n = cfg.parallel.tensor_size;
  if (n == 1) {
    devs.push_back(make_device(cfg));
    return devs;
  }
  config::server_config one = cfg;
  one.device.backend = cfg.device.backend == "auto" ? "sim" : cfg.device.backend;
#ifdef COURIER_HAVE_CUDA
  if (cfg.device.backend == "cuda" ||
      (cfg.device.backend == "auto" && gpu::cuda::has_device())) {
#ifdef COURIER_HAVE_NCCL
    const int gpus = gpu::cuda::visible_gpus();
    const int first = cfg.device.index;
    if (first + n > gpus) {
      throw std::runtime_error(fmt::format(
          "parallel.tensor_size: {} ranks from device.index {} need GPUs {}..{}; this process "
          "sees {}",
          n, first, first, first + n - 1, gpus));
    }
    gpu::cuda::cuda_options options;
    options.gemm_autotune = cfg.engine.gemm_autotune;
    std::vector<gpu::device*> raw;
    for (std::int32_t r = 0; r < n; ++r) {  // GPU index + r for rank r
      devs.push_back(gpu::cuda::make_cuda_device(first + r, options));
      raw.push_back(devs.back().get());
    }
    group = gpu::cuda::make_nccl_group(raw);
    for (std::int32_t r = 0; r < n; ++r) devs[static_cast<std::size_t>(r)]->join_group(group[r]);
    devs[0]->bind_thread();
    return devs;
#else
    throw std::runtime_error(fmt::format(
        "parallel.tensor_size: {} ranks on the CUDA backend need NCCL, which this build did not "
        "find (nccl.h); device.backend=sim runs them on simulated devices",
        n));
#endif
  }
#endif
  if (cfg.device.backend == "cuda") {
    throw std::runtime_error(fmt::format(
        "parallel.tensor_size: {} ranks need the sim backend in this build (device.backend=sim)",
        n));
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = cfg.device.sim.threads > 0 ? cfg.device.sim.threads : cores;
  one.device.sim.threads = std::max(1, threads / n);  // the ranks compute at once
  group = gpu::sim::make_thread_group(n);
  for (std::int32_t r = 0; r < n; ++r) {
    devs.push_back(make_device(one));
    devs.back()->join_group(group[static_cast<std::size_t>(r)]);
  }
  return devs;
}

gpu::workspace_limits step_limits_for(const config::server_config& cfg,
                                      std::int64_t max_model_len) {
  gpu::workspace_limits l;
  l.max_tokens = cfg.scheduler.max_batched_tokens;
  l.max_seqs = cfg.scheduler.max_num_seqs;
  l.max_kv_len = max_model_len;
  l.block_size = cfg.scheduler.block_size;
  // A decode row verifying drafts samples 1 + num_draft positions.
  const std::int64_t per_row =
      1 + (cfg.speculative.prompt_lookup.enabled ? cfg.speculative.prompt_lookup.num_draft : 0);
  l.max_sample_rows = std::min(l.max_tokens, l.max_seqs * per_row);
  return l;
}

std::int32_t state_slots_for(const config::server_config& cfg, const gpu::device& dev,
                             const model::llama_model& m, std::size_t workspace_bytes) {
  const std::int32_t want = cfg.scheduler.state_slots > 0
                                ? cfg.scheduler.state_slots
                                : cfg.scheduler.max_num_seqs;
  if (cfg.scheduler.state_slots > 0) return want;
  const double budget = static_cast<double>(dev.memory_budget_bytes()) * cfg.device.memory_fraction;
  const double left =
      budget - static_cast<double>(m.weight_bytes()) - static_cast<double>(workspace_bytes);
  const double fit = left / 2 / static_cast<double>(std::max<std::size_t>(m.state_bytes_per_slot(), 1));
  if (fit < 1) {
    throw std::runtime_error(fmt::format(
        "device memory: the weights ({} MB) and workspaces ({} MB) leave no room for one "
        "sequence's Mamba-2 state ({} MB) in the budget ({} MB)",
        m.weight_bytes() >> 20, workspace_bytes >> 20, m.state_bytes_per_slot() >> 20,
        static_cast<long long>(budget) >> 20));
  }
  return static_cast<std::int32_t>(std::min<double>(want, fit));
}

std::int32_t snapshot_slots_for(const config::server_config& cfg, const gpu::device& dev,
                                const model::llama_model& m, std::size_t reserved_bytes,
                                std::int32_t state_slots) {
  if (!cfg.scheduler.prefix_caching) return 0;
  if (cfg.cache.ssm_snapshots > 0) return cfg.cache.ssm_snapshots;
  const double budget = static_cast<double>(dev.memory_budget_bytes()) * cfg.device.memory_fraction;
  const double left =
      budget - static_cast<double>(m.weight_bytes()) - static_cast<double>(reserved_bytes);
  const double fit =
      left / 4 / static_cast<double>(std::max<std::size_t>(m.state_bytes_per_slot(), 1));
  return static_cast<std::int32_t>(std::max(0.0, std::min<double>(2.0 * state_slots, fit)));
}

std::int32_t draft_state_rows_for(const config::server_config& cfg, const gpu::device& dev,
                                  const model::llama_model& m, std::size_t reserved_bytes) {
  const auto& pl = cfg.speculative.prompt_lookup;
  if (!pl.enabled) return 0;
  const double budget = static_cast<double>(dev.memory_budget_bytes()) * cfg.device.memory_fraction;
  const double left =
      budget - static_cast<double>(m.weight_bytes()) - static_cast<double>(reserved_bytes);
  const double fit =
      left / 8 / static_cast<double>(std::max<std::size_t>(m.state_bytes_per_slot(), 1));
  const double want = static_cast<double>(pl.num_draft) * cfg.scheduler.max_num_seqs;
  return static_cast<std::int32_t>(std::max(0.0, std::min(want, fit)));
}

std::int32_t kv_blocks_for(const config::server_config& cfg, const gpu::device& dev,
                           const model::llama_model& m, std::size_t workspace_bytes) {
  if (cfg.scheduler.num_kv_blocks) return static_cast<std::int32_t>(*cfg.scheduler.num_kv_blocks);
  const double budget = static_cast<double>(dev.memory_budget_bytes()) * cfg.device.memory_fraction;
  const double left =
      budget - static_cast<double>(m.weight_bytes()) - static_cast<double>(workspace_bytes);
  const std::size_t per_block =
      model::kv_cache::block_bytes(m.shard_config(), cfg.scheduler.block_size, dev.compute_dtype());
  const double n = left / static_cast<double>(per_block);
  if (n < 1) {
    throw std::runtime_error(fmt::format(
        "device memory: the weights ({} MB) and workspaces ({} MB) leave no room for KV blocks in "
        "the budget ({} MB)",
        m.weight_bytes() >> 20, workspace_bytes >> 20, static_cast<long long>(budget) >> 20));
  }
  return static_cast<std::int32_t>(std::min(n, 1e9));
}

}  // namespace courier::actors
