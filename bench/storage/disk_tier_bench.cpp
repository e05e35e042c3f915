// The KV disk tier's file on this machine's disk: write and read bandwidth of whole blocks
// (header, payload, CRC-32) as the disk actor does them, for tiny-llama3's blocks (32 KB) and
// Llama-3-8B's (2 MB for 16 tokens in bf16), one and four threads at once. Prints figures only.
//
//   disk_tier_bench [--dir /tmp] [--mb 256]
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "storage/disk_block_file.hpp"

using namespace courier::storage;

namespace {

double run(disk_block_file& f, std::size_t block_bytes, std::int64_t n, int threads, bool write) {
  std::atomic<std::int64_t> next{0};
  std::atomic<int> failed{0};
  auto worker = [&] {
    disk_staging staging(f.slot_bytes());
    std::vector<unsigned char> block(block_bytes);
    disk_block_key key;
    key.tokens.assign(16, 0);
    std::string error;
    for (std::int64_t i = next++; i < n; i = next++) {
      key.hash = static_cast<std::uint64_t>(i) + 1;
      key.parent = static_cast<std::uint64_t>(i);
      std::memset(block.data(), static_cast<int>(i & 0xff), 64);
      const bool ok = write ? f.write(i, key, block.data(), staging, error)
                            : f.read(i, key, block.data(), staging, error);
      if (!ok) ++failed;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (failed > 0) fmt::print("  ({} copies failed)\n", failed.load());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp";
  std::size_t total_mb = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--dir") dir = argv[i + 1];
    if (std::string(argv[i]) == "--mb") total_mb = std::strtoul(argv[i + 1], nullptr, 10);
  }
  const std::string path = (std::filesystem::path(dir) / "courier-disk-bench.blocks").string();
  fmt::print("{:>10} {:>8} {:>7} {:>12} {:>12} {:>14} {:>14}\n", "block", "threads", "io",
             "write GB/s", "read GB/s", "write us/blk", "read us/blk");
  for (const std::size_t block : {std::size_t(32) << 10, std::size_t(2) << 20}) {
    for (const int threads : {1, 4}) {
      disk_file_options o;
      o.path = path;
      o.block_bytes = block;
      o.block_size = 16;
      o.num_slots = static_cast<std::int64_t>((total_mb << 20) / block);
      disk_block_file f(o);
      const double w = run(f, block, o.num_slots, threads, true);
      const double r = run(f, block, o.num_slots, threads, false);
      const double gb = static_cast<double>(block) * static_cast<double>(o.num_slots) / 1e9;
      fmt::print("{:>9}K {:>8} {:>7} {:>12.2f} {:>12.2f} {:>14.1f} {:>14.1f}\n", block >> 10,
                 threads, f.direct() ? "direct" : "buffered", gb / w, gb / r,
                 w * 1e6 / static_cast<double>(o.num_slots),
                 r * 1e6 / static_cast<double>(o.num_slots));
    }
  }
  return 0;
}
