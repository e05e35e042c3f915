#pragma once
// The KV disk tier's file: a fixed number of slots, each one KV block (the bytes of a host tier
// block: every layer's K then V page) behind a header that names it. Each slot is written and
// read whole, with O_DIRECT where the file system allows it (aligned buffers, no page cache).
//
// Header (in the slot's first header_bytes()): magic and format version, the block size, the
// payload's size, the fingerprint (model, tokenizer and layout: fingerprint.hpp), the block's
// chain hash, its parent's, its tokens, a CRC-32 of the payload and one of the header. A read
// serves a slot only when every one of them is what the caller expects: a torn write, a
// truncated or corrupted file, another model's file or a reused slot is a failed read, never
// another block's bytes.
//
// Thread safety: reads and writes of different slots may run at once (pread/pwrite), each with
// its own staging buffer.
#include <sys/types.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace courier::storage {

// The system calls the file's reads and writes go through, so tests can make them fail (a
// failing disk, a full one) without one.
class disk_io {
 public:
  virtual ~disk_io() = default;
  virtual ssize_t pwrite(int fd, const void* buf, std::size_t n, off_t at);
  virtual ssize_t pread(int fd, void* buf, std::size_t n, off_t at);
};

struct disk_file_options {
  std::string path;             // the file (its folder must exist)
  std::size_t block_bytes = 0;  // one block's payload
  std::int32_t block_size = 0;  // tokens per block
  std::int64_t num_slots = 0;
  std::uint64_t fingerprint = 0;
  // Keep the entries a previous run left (scan() finds them) instead of starting empty; without
  // it the file is emptied at open and removed at close.
  bool persist = false;
  bool direct_io = true;  // O_DIRECT when the file system takes it (else the page cache)
};

// What a slot holds besides the block's bytes.
struct disk_block_key {
  std::uint64_t hash = 0;             // the chain hash of the prefix the block ends
  std::uint64_t parent = 0;           // the chain hash before it
  std::vector<std::uint32_t> tokens;  // its block_size tokens
};

// An aligned buffer of one slot, for one thread's reads and writes.
class disk_staging {
 public:
  explicit disk_staging(std::size_t bytes);
  unsigned char* data() const { return buf_.get(); }

 private:
  struct free_aligned {
    void operator()(unsigned char* p) const;
  };
  std::unique_ptr<unsigned char, free_aligned> buf_;
};

class disk_block_file {
 public:
  // Opens (creating) the file and reserves its slots on the disk; std::runtime_error naming the
  // path and the system's reason when it cannot (no folder, no permission, no space).
  explicit disk_block_file(disk_file_options o, std::shared_ptr<disk_io> io = {});
  ~disk_block_file();
  disk_block_file(const disk_block_file&) = delete;
  disk_block_file& operator=(const disk_block_file&) = delete;

  struct restored {
    std::int64_t slot = 0;
    disk_block_key key;
  };
  struct scan_counts {
    std::int64_t other_fingerprint = 0;  // another model, tokenizer or layout
    std::int64_t damaged = 0;  // a header that fails its checks, or cut off by the file's end
  };
  // With persist: the slots a previous run left whose header is intact and matches this file's
  // fingerprint and layout and which the file holds whole (their payload is checked when read);
  // the rest that held something are counted, and their headers cleared (so a later run does
  // not find them again). Without: nothing.
  std::vector<restored> scan(scan_counts& dropped);

  // Writes `src` (block_bytes) into `slot` under `key`; false with the reason in `error`.
  bool write(std::int64_t slot, const disk_block_key& key, const void* src, disk_staging& staging,
             std::string& error);
  // Reads `slot` into `dst` (block_bytes) if it holds exactly the block `key` names, intact;
  // false with the reason in `error` (nothing is written to dst then; a damaged slot's header
  // is cleared, so no later run finds it).
  bool read(std::int64_t slot, const disk_block_key& key, void* dst, disk_staging& staging,
            std::string& error);
  // The same, the block's bytes in equal parts one after the other (each tensor-parallel rank's
  // host block, in rank order): block_bytes / parts.size() bytes from or to each.
  bool write(std::int64_t slot, const disk_block_key& key, const std::vector<const void*>& parts,
             disk_staging& staging, std::string& error);
  bool read(std::int64_t slot, const disk_block_key& key, const std::vector<void*>& parts,
            disk_staging& staging, std::string& error);

  std::size_t slot_bytes() const { return slot_bytes_; }
  // One part's bytes when a block is in `parts` equal parts; std::invalid_argument when it
  // does not split so.
  std::size_t part_bytes(std::size_t parts) const;
  std::size_t header_bytes() const { return header_bytes_; }
  std::int64_t num_slots() const { return o_.num_slots; }
  bool direct() const { return direct_; }
  const std::string& path() const { return o_.path; }

  // One slot's bytes for a block of block_bytes and block_size tokens.
  static std::size_t slot_bytes_for(std::size_t block_bytes, std::int32_t block_size);

 private:
  // Closes the file and throws, naming it, unless it is a regular file of this user's with one
  // link: a file planted at the path (a hard link to another file, another user's) is never
  // truncated or written.
  void refuse_foreign_file();
  bool check_header(const unsigned char* h, std::string& error) const;
  void clear_header(std::int64_t slot, unsigned char* staging);
  off_t offset(std::int64_t slot) const;

  disk_file_options o_;
  std::shared_ptr<disk_io> io_;
  int fd_ = -1;
  bool direct_ = false;
  std::size_t header_bytes_ = 0;
  std::size_t slot_bytes_ = 0;
  off_t size_before_ = 0;  // the file's size when opened (persist: what a previous run left)
};

}  // namespace courier::storage
