// Rows fed on the device on the CUDA backend: the feed steps (tests/gpu/model/feed_steps.hpp),
// each launched behind the step in flight with its decode rows fed by copy_tokens from the
// sampler's tokens, against the same steps one at a time with the tokens written in. The same
// kernels see the same inputs, so the samples are equal bit for bit; GEMM autotuning is off so
// that both runs use the same algorithms; a third run also scores the prompts, and a fourth pair
// runs penalised sequences with their lists on the device against lists counted on the host.
// Skipped without a GPU.
#include <catch2/catch.hpp>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#include "tests/gpu/model/feed_steps.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_feed {

using namespace courier;
using namespace courier::test::feed;

TEST_CASE("cuda feed: rows fed on the device from the launch before equal rows given its tokens",
          "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const bool graphs : {false, true}) {
    INFO((graphs ? "graphs" : "op by op"));
    gpu::cuda::cuda_options o;
    o.gemm_autotune = false;
    auto dev = gpu::cuda::make_cuda_device(0, o);
    auto m = model::llama_model::load(test::model_dir("tiny-qwen3"), *dev);
    m->reserve(limits());
    if (graphs) m->enable_graphs(8);
    model::kv_cache fed_cache(*dev, m->config(), 16, block_size),
        written_cache(*dev, m->config(), 16, block_size);
    const auto fed = run(*m, fed_cache, true);
    const auto written = run(*m, written_cache, false);
    require_same(fed, written);
    // Prefill rows that also score their prompts on the device (prompt logprobs): the scores sit
    // between the samples in the sampling launch, and the feeds must still read the samples.
    model::kv_cache scored_cache(*dev, m->config(), 16, block_size);
    require_same(run(*m, scored_cache, true, true), written);
    // Penalised sequences whose lists stay on the device (each sample counted by
    // count_penalty_tokens before the next launch samples), with tables kept there too, against
    // lists counted on the host and written with every row.
    model::kv_cache listed_cache(*dev, m->config(), 16, block_size),
        counted_cache(*dev, m->config(), 16, block_size);
    require_same(run(*m, listed_cache, true, false, true, true),
                 run(*m, counted_cache, false, false, false, true));
  }
}

}  // namespace courier_test_gpu_cuda_feed
