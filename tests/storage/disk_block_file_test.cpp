// The disk tier's file: a block written comes back bit for bit, and nothing else ever does: a
// corrupted payload, a reused slot, another model's file, a truncated file, or a failing disk
// is a failed read or write, never another block's bytes.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "storage/disk_block_file.hpp"
#include "storage/fingerprint.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_storage_disk_block_file {

using namespace courier::storage;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_bytes = 5000;  // not a multiple of the alignment: padding is exercised
constexpr std::int32_t k_bs = 16;

std::string temp_path(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("courier-disk-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

disk_file_options options(const std::string& path, bool persist, std::uint64_t fingerprint = 7) {
  disk_file_options o;
  o.path = path;
  o.block_bytes = k_bytes;
  o.block_size = k_bs;
  o.num_slots = 8;
  o.fingerprint = fingerprint;
  o.persist = persist;
  return o;
}

disk_block_key key_for(std::uint64_t seed) {
  disk_block_key k;
  k.hash = seed * 0x9e3779b97f4a7c15ULL + 1;
  k.parent = seed;
  for (int i = 0; i < k_bs; ++i) k.tokens.push_back(static_cast<std::uint32_t>(seed * 100 + i));
  return k;
}

std::vector<unsigned char> payload(unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> p(k_bytes);
  for (auto& b : p) b = static_cast<unsigned char>(rng());
  return p;
}

// Flips one byte of the file at `at`.
void flip_byte(const std::string& path, std::size_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(&c, 1);
}

// A disk that fails every write after the first `ok_writes` with `err`.
class failing_io : public disk_io {
 public:
  failing_io(int ok_writes, int err) : left_(ok_writes), err_(err) {}
  ssize_t pwrite(int fd, const void* buf, std::size_t n, off_t at) override {
    if (left_-- > 0) return disk_io::pwrite(fd, buf, n, at);
    errno = err_;
    return -1;
  }

 private:
  int left_;
  int err_;
};

// A disk whose reads return half of what was asked, then the end of the file.
class short_read_io : public disk_io {
 public:
  ssize_t pread(int fd, void* buf, std::size_t n, off_t at) override {
    if (calls_++ % 2 == 0) return disk_io::pread(fd, buf, n / 2, at);
    return 0;
  }

 private:
  int calls_ = 0;
};

}  // namespace

TEST_CASE("disk block file: a block written comes back bit for bit, under its key only",
          "[storage]") {
  const std::string path = temp_path("roundtrip.blocks");
  disk_block_file f(options(path, false));
  disk_staging staging(f.slot_bytes());
  std::string error;
  for (unsigned s = 0; s < 8; ++s) {
    REQUIRE(f.write(s, key_for(s), payload(s).data(), staging, error));
  }
  for (unsigned s = 0; s < 8; ++s) {
    std::vector<unsigned char> out(k_bytes, 0);
    REQUIRE(f.read(s, key_for(s), out.data(), staging, error));
    CHECK(out == payload(s));
  }
  // Another block's key (the slot was reused, or the index is wrong): refused, dst untouched.
  std::vector<unsigned char> out(k_bytes, 0xee);
  CHECK_FALSE(f.read(3, key_for(4), out.data(), staging, error));
  CHECK(error == "the slot holds another block");
  CHECK(out == std::vector<unsigned char>(k_bytes, 0xee));
  disk_block_key other_tokens = key_for(3);
  other_tokens.tokens[5] += 1;
  CHECK_FALSE(f.read(3, other_tokens, out.data(), staging, error));
  CHECK((f.slot_bytes() % 4096) == 0);
  CHECK(f.slot_bytes() >= k_bytes + 56 + 4 * k_bs);
}

TEST_CASE("disk block file: a block in parts (each tensor-parallel rank's) is stored as their "
          "concatenation and read back part by part",
          "[storage]") {
  const std::string path = temp_path("parts.blocks");
  disk_block_file f(options(path, false));
  disk_staging staging(f.slot_bytes());
  std::string error;
  const std::vector<unsigned char> whole = payload(11);
  const std::size_t half = k_bytes / 2;
  REQUIRE(f.part_bytes(2) == half);
  CHECK_THROWS_AS(f.part_bytes(3), std::invalid_argument);  // 5000 bytes: not in 3
  REQUIRE(f.write(2, key_for(2), std::vector<const void*>{whole.data(), whole.data() + half},
                  staging, error));
  std::vector<unsigned char> out(k_bytes, 0);
  REQUIRE(f.read(2, key_for(2), out.data(), staging, error));  // one part: the concatenation
  CHECK(out == whole);
  std::vector<unsigned char> a(half, 0), b(half, 0);
  REQUIRE(f.read(2, key_for(2), std::vector<void*>{a.data(), b.data()}, staging, error));
  CHECK(std::equal(a.begin(), a.end(), whole.begin()));
  CHECK(std::equal(b.begin(), b.end(), whole.begin() + static_cast<std::ptrdiff_t>(half)));
}

TEST_CASE("disk block file: a corrupted payload or header is a failed read, never served",
          "[storage]") {
  const std::string path = temp_path("corrupt.blocks");
  disk_block_file f(options(path, false));
  disk_staging staging(f.slot_bytes());
  std::string error;
  REQUIRE(f.write(2, key_for(2), payload(2).data(), staging, error));
  REQUIRE(f.write(5, key_for(5), payload(5).data(), staging, error));
  flip_byte(path, 2 * f.slot_bytes() + f.header_bytes() + 1234);  // in slot 2's payload
  flip_byte(path, 5 * f.slot_bytes() + 60);                       // in slot 5's tokens
  std::vector<unsigned char> out(k_bytes, 0);
  CHECK_FALSE(f.read(2, key_for(2), out.data(), staging, error));
  CHECK(error == "the block's checksum does not match (corrupted)");
  CHECK_FALSE(f.read(5, key_for(5), out.data(), staging, error));
  CHECK(error == "damaged block header");
  CHECK_FALSE(f.read(6, key_for(6), out.data(), staging, error));  // never written
  CHECK(error == "no block header");
}

TEST_CASE(
    "disk block file: a persisted file keeps its blocks for a run with the same "
    "fingerprint, and drops another's, damaged and cut-off ones",
    "[storage]") {
  const std::string path = temp_path("persist.blocks");
  std::size_t slot_bytes = 0;
  {
    disk_block_file f(options(path, true));
    disk_staging staging(f.slot_bytes());
    std::string error;
    for (unsigned s : {0u, 1u, 3u, 6u, 7u}) {
      REQUIRE(f.write(s, key_for(s), payload(s).data(), staging, error));
    }
    slot_bytes = f.slot_bytes();
  }
  REQUIRE(fs::exists(path));                               // persisted: kept at close
  flip_byte(path, 1 * slot_bytes + 40);                    // slot 1's parent hash: header CRC fails
  fs::resize_file(path, 6 * slot_bytes + slot_bytes / 2);  // cuts slot 6 in two, drops slot 7
  {
    disk_block_file f(options(path, true));
    disk_block_file::scan_counts dropped;
    const auto kept = f.scan(dropped);
    std::vector<std::int64_t> slots;
    for (const auto& r : kept) {
      slots.push_back(r.slot);
      CHECK(r.key.hash == key_for(static_cast<unsigned>(r.slot)).hash);
      CHECK(r.key.tokens == key_for(static_cast<unsigned>(r.slot)).tokens);
    }
    CHECK(slots == std::vector<std::int64_t>{0, 3});
    CHECK(dropped.damaged == 2);  // slot 1's header, slot 6 cut off (slot 7 is gone: empty)
    CHECK(dropped.other_fingerprint == 0);
    disk_staging staging(f.slot_bytes());
    std::string error;
    std::vector<unsigned char> out(k_bytes, 0);
    REQUIRE(f.read(3, key_for(3), out.data(), staging, error));
    CHECK(out == payload(3));
  }
  {  // another model's run: everything is dropped, nothing read
    disk_block_file f(options(path, true, 8));
    disk_block_file::scan_counts dropped;
    CHECK(f.scan(dropped).empty());
    CHECK(dropped.other_fingerprint == 2);
    disk_staging staging(f.slot_bytes());
    std::string error;
    std::vector<unsigned char> out(k_bytes, 0);
    CHECK_FALSE(f.read(0, key_for(0), out.data(), staging, error));
    CHECK(error == "no block header");  // the scan cleared it
  }
  {  // not persisted: the file starts empty, and goes at close
    disk_block_file f(options(path, false));
    disk_block_file::scan_counts dropped;
    CHECK(f.scan(dropped).empty());
    disk_staging staging(f.slot_bytes());
    std::string error;
    std::vector<unsigned char> out(k_bytes, 0);
    CHECK_FALSE(f.read(0, key_for(0), out.data(), staging, error));
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE(
    "disk block file: a failing or full disk fails the write with its reason, and a "
    "short read fails the read",
    "[storage]") {
  const std::string path = temp_path("failing.blocks");
  {
    disk_block_file f(options(path, false), std::make_shared<failing_io>(1, ENOSPC));
    disk_staging staging(f.slot_bytes());
    std::string error;
    CHECK(f.write(0, key_for(0), payload(0).data(), staging, error));
    CHECK_FALSE(f.write(1, key_for(1), payload(1).data(), staging, error));
    CHECK(error.find("No space left on device") != std::string::npos);
    CHECK_FALSE(f.write(2, key_for(2), payload(2).data(), staging, error));
    std::vector<unsigned char> out(k_bytes, 0);
    CHECK(f.read(0, key_for(0), out.data(), staging, error));  // what was written still reads
    CHECK(out == payload(0));
    CHECK_FALSE(f.read(1, key_for(1), out.data(), staging, error));
  }
  {
    disk_block_file f(options(path, false), std::make_shared<short_read_io>());
    disk_staging staging(f.slot_bytes());
    std::string error;
    REQUIRE(f.write(0, key_for(0), payload(0).data(), staging, error));
    std::vector<unsigned char> out(k_bytes, 0);
    CHECK_FALSE(f.read(0, key_for(0), out.data(), staging, error));
    CHECK(error == "the file ends before the block");
  }
}

TEST_CASE(
    "disk block file: one process per file, and a clear error where the file cannot be "
    "had",
    "[storage]") {
  const std::string path = temp_path("locked.blocks");
  disk_block_file f(options(path, false));
  CHECK_THROWS_WITH(disk_block_file(options(path, false)),
                    Catch::Contains("is in use by another process"));
  CHECK_THROWS_WITH(disk_block_file(options("/nonexistent-courier/x.blocks", false)),
                    Catch::Contains("cannot open /nonexistent-courier/x.blocks"));
}

TEST_CASE(
    "disk block file: a link or a FIFO planted at the path is refused, naming it, and its "
    "target is left as it was",
    "[storage]") {
  const std::string victim = temp_path("victim.txt");
  const std::string text(4 << 20, 'v');  // the reported case: 4 MB overwritten with zeros
  std::ofstream(victim, std::ios::binary) << text;
  auto victim_intact = [&] {
    std::ifstream in(victim, std::ios::binary);
    const std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return now == text;
  };
  for (const bool persist : {false, true}) {
    SECTION(persist ? "persisted" : "not persisted") {
      const std::string sym = temp_path("symlink.blocks");
      fs::remove(sym);
      fs::create_symlink(victim, sym);
      CHECK_THROWS_WITH(disk_block_file(options(sym, persist)),
                        Catch::Contains(sym) && Catch::Contains("is a symbolic link"));
      CHECK(victim_intact());
      CHECK(fs::is_symlink(sym));  // not removed either: it is not the server's

      const std::string dangling = temp_path("dangling.blocks");
      fs::remove(dangling);
      fs::create_symlink(temp_path("nothing-here"), dangling);
      CHECK_THROWS_WITH(disk_block_file(options(dangling, persist)),
                        Catch::Contains("is a symbolic link"));
      CHECK_FALSE(fs::exists(temp_path("nothing-here")));

      const std::string hard = temp_path("hardlink.blocks");
      fs::remove(hard);
      fs::create_hard_link(victim, hard);
      CHECK_THROWS_WITH(disk_block_file(options(hard, persist)),
                        Catch::Contains(hard) && Catch::Contains("2 hard links"));
      CHECK(victim_intact());

      const std::string fifo = temp_path("fifo.blocks");
      fs::remove(fifo);
      REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
      CHECK_THROWS_WITH(disk_block_file(options(fifo, persist)),
                        Catch::Contains(fifo) && Catch::Contains("is not a regular file"));
      fs::remove(sym);
      fs::remove(dangling);
      fs::remove(hard);
      fs::remove(fifo);
    }
  }
}

TEST_CASE("fingerprint: a model folder's changes change it, its copies do not", "[storage]") {
  const fs::path dir = fs::path(temp_path("model"));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  };
  std::string weights(8, '\0');
  const std::string header = "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
  weights[0] = static_cast<char>(header.size());
  weights += header + std::string(16, 'a');
  write("config.json", "{\"hidden_size\": 8}");
  write("tokenizer.json", "{}");
  write("model.safetensors", weights);
  const std::uint64_t base = model_fingerprint(dir.string(), "layout");
  CHECK(model_fingerprint(dir.string(), "layout") == base);
  CHECK(model_fingerprint(dir.string(), "other layout") != base);
  write("tokenizer.json", "{\"x\": 1}");
  CHECK(model_fingerprint(dir.string(), "layout") != base);
  write("tokenizer.json", "{}");
  REQUIRE(model_fingerprint(dir.string(), "layout") == base);
  weights.back() = 'b';  // same shapes, other weights
  write("model.safetensors", weights);
  CHECK(model_fingerprint(dir.string(), "layout") != base);
}

}  // namespace courier_test_storage_disk_block_file
