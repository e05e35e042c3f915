// The sim's copy stream (device::copy_async) as the KV tiers use it through
// kv_cache::copy_blocks_async: batches run after what was enqueued before them, not before their
// latency, in the order enqueued, and move exactly what copy_block moves.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include "gpu/model/kv_cache.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_copy_engine {

using namespace courier;

TEST_CASE("sim copy stream: a batch lands after its latency, in order, as copy_block would",
          "[sim]") {
  auto dev = gpu::make_sim_device(1, 256, 100'000);  // 100 ms a batch
  auto cfg = model::load_model_config(test::model_dir("tiny-qwen2"));
  model::kv_cache cache(*dev, cfg, 4, 16);
  cache.reserve_host(3);
  const std::size_t bytes = cache.host_block_bytes();
  auto* host = static_cast<unsigned char*>(cache.host_memory().get());
  for (std::size_t i = 0; i < 3 * bytes; ++i) host[i] = static_cast<unsigned char>(i % 251 + 1);
  const std::vector<unsigned char> h0(host, host + bytes), h1(host + bytes, host + 2 * bytes);

  // Host block 0 to device block 2 and host block 1 to device block 3 in one batch; then, in a
  // second batch enqueued behind it, device block 2 back out to host block 2.
  const auto start = std::chrono::steady_clock::now();
  auto in = cache.copy_blocks_async({{2, 0, false}, {3, 1, false}});
  auto out = cache.copy_blocks_async({{2, 2, true}});
  CHECK_FALSE(in->ready());
  std::memset(host + 2 * bytes, 0, bytes);  // still free to write: the copy out has not run
  out->wait();
  CHECK(in->ready());  // in order: the first batch before the second
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100));
  CHECK(std::vector<unsigned char>(host + 2 * bytes, host + 3 * bytes) == h0);

  // Device block 3 holds host block 1, exactly as copy_block takes it out again.
  std::memset(host, 0, bytes);
  cache.copy_block(3, 0, true);
  CHECK(std::vector<unsigned char>(host, host + bytes) == h1);

  // A copy out of range is refused before anything of its batch is enqueued.
  std::memset(host + 2 * bytes, 0, bytes);
  CHECK_THROWS_WITH(cache.copy_blocks_async({{1, 2, true}, {9, 0, true}}),
                    Catch::Contains("out of range"));
  cache.copy_blocks_async({})->wait();  // an empty batch behind it: the refused one ran nothing
  CHECK(std::vector<unsigned char>(host + 2 * bytes, host + 3 * bytes) ==
        std::vector<unsigned char>(bytes, 0));
}

}  // namespace courier_test_gpu_sim_copy_engine
