#include "storage/disk_block_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace courier::storage {

namespace {

constexpr std::size_t k_align = 4096;  // O_DIRECT's alignment on every common file system
constexpr std::uint64_t k_magic = 0x314b4c42564b5243ULL;  // "CRKVBLK1"
constexpr std::uint32_t k_version = 1;
// Header fields, at fixed offsets.
constexpr std::size_t k_at_version = 8, k_at_block_size = 12, k_at_payload = 16,
                      k_at_fingerprint = 24, k_at_hash = 32, k_at_parent = 40,
                      k_at_payload_crc = 48, k_at_header_crc = 52, k_at_tokens = 56;

std::size_t round_up(std::size_t n) {
  return (n + k_align - 1) / k_align * k_align;
}

template <class T>
void put(unsigned char* h, std::size_t at, T v) {
  std::memcpy(h + at, &v, sizeof v);
}
template <class T>
T get(const unsigned char* h, std::size_t at) {
  T v;
  std::memcpy(&v, h + at, sizeof v);
  return v;
}

std::uint32_t crc(const unsigned char* p, std::size_t n) {
  return static_cast<std::uint32_t>(crc32_z(crc32_z(0, nullptr, 0), p, n));
}

// The header's CRC: over its fields and tokens with the CRC field itself taken as zero.
std::uint32_t header_crc(const unsigned char* h, std::int32_t block_size) {
  const std::size_t n = k_at_tokens + 4 * static_cast<std::size_t>(block_size);
  std::uint32_t c = crc32_z(crc32_z(0, nullptr, 0), h, k_at_header_crc);
  const unsigned char zero[4] = {0, 0, 0, 0};
  c = crc32_z(c, zero, 4);
  return static_cast<std::uint32_t>(crc32_z(c, h + k_at_tokens, n - k_at_tokens));
}

std::string sys_error(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

// Whole-buffer I/O: short reads and writes continue; false (errno set) on an error, or on a
// read past the end (errno 0).
template <class F>
bool whole(F op, unsigned char* buf, std::size_t n, off_t at) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t k = op(buf + done, n - done, at + static_cast<off_t>(done));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = 0;
      return false;
    }
    done += static_cast<std::size_t>(k);
  }
  return true;
}

}  // namespace

ssize_t disk_io::pwrite(int fd, const void* buf, std::size_t n, off_t at) {
  return ::pwrite(fd, buf, n, at);
}
ssize_t disk_io::pread(int fd, void* buf, std::size_t n, off_t at) {
  return ::pread(fd, buf, n, at);
}

void disk_staging::free_aligned::operator()(unsigned char* p) const {
  std::free(p);
}

disk_staging::disk_staging(std::size_t bytes)
    : buf_(static_cast<unsigned char*>(std::aligned_alloc(k_align, round_up(bytes)))) {
  if (!buf_) throw std::bad_alloc();
}

std::size_t disk_block_file::slot_bytes_for(std::size_t block_bytes, std::int32_t block_size) {
  return round_up(k_at_tokens + 4 * static_cast<std::size_t>(block_size)) + round_up(block_bytes);
}

disk_block_file::disk_block_file(disk_file_options o, std::shared_ptr<disk_io> io)
    : o_(std::move(o)), io_(io ? std::move(io) : std::make_shared<disk_io>()) {
  if (o_.block_bytes == 0 || o_.block_size <= 0 || o_.num_slots <= 0) {
    throw std::invalid_argument("disk_block_file: empty layout");
  }
  header_bytes_ = round_up(k_at_tokens + 4 * static_cast<std::size_t>(o_.block_size));
  slot_bytes_ = slot_bytes_for(o_.block_bytes, o_.block_size);
  // Never through a link: a link planted at the path would have us truncate and overwrite
  // its target.
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
  if (o_.direct_io) {
    fd_ = ::open(o_.path.c_str(), flags | O_DIRECT, 0600);
    direct_ = fd_ >= 0;
  }
  if (fd_ < 0 && errno != ELOOP) fd_ = ::open(o_.path.c_str(), flags, 0600);  // tmpfs: no O_DIRECT
  if (fd_ < 0 && errno == ELOOP) {
    throw std::runtime_error(o_.path + " is a symbolic link; courier writes its block file only "
                                       "as a regular file of its own (remove the link)");
  }
  if (fd_ < 0) throw std::runtime_error(sys_error("cannot open " + o_.path, errno));
  refuse_foreign_file();
  // One server per file: another one's blocks would be overwritten under it.
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(err == EWOULDBLOCK ? o_.path + " is in use by another process"
                                                : sys_error("cannot lock " + o_.path, err));
  }
  if (!o_.persist && ::ftruncate(fd_, 0) != 0) {  // nothing of a previous run survives
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(sys_error("cannot empty " + o_.path, err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(sys_error("cannot stat " + o_.path, err));
  }
  size_before_ = st.st_size;
  const auto size = static_cast<off_t>(slot_bytes_) * static_cast<off_t>(o_.num_slots);
  // Reserved now, so that a full disk is an error at start rather than a failed write later.
  if (st.st_size > size && ::ftruncate(fd_, size) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(sys_error("cannot resize " + o_.path, err));
  }
  if (const int err = ::posix_fallocate(fd_, 0, size); err != 0) {
    ::close(fd_);
    if (!o_.persist) ::unlink(o_.path.c_str());
    throw std::runtime_error(
        sys_error("cannot reserve " + std::to_string(size >> 20) + " MB in " + o_.path, err));
  }
}

void disk_block_file::refuse_foreign_file() {
  struct stat st {};
  std::string why;
  if (::fstat(fd_, &st) != 0) {
    why = sys_error("cannot stat " + o_.path, errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = o_.path + " is not a regular file";
  } else if (st.st_nlink != 1) {
    why = o_.path + " has " + std::to_string(st.st_nlink) +
          " hard links; courier writes only a block file of its own (remove the others)";
  } else if (st.st_uid != ::geteuid()) {
    why = o_.path + " belongs to another user; courier writes only a block file of its own";
  }
  if (why.empty()) return;
  ::close(fd_);
  fd_ = -1;
  throw std::runtime_error(why);
}

disk_block_file::~disk_block_file() {
  ::close(fd_);
  if (!o_.persist) ::unlink(o_.path.c_str());
}

off_t disk_block_file::offset(std::int64_t slot) const {
  if (slot < 0 || slot >= o_.num_slots) {
    throw std::invalid_argument("disk_block_file: slot " + std::to_string(slot) + " of " +
                                std::to_string(o_.num_slots));
  }
  return static_cast<off_t>(slot) * static_cast<off_t>(slot_bytes_);
}

bool disk_block_file::check_header(const unsigned char* h, std::string& error) const {
  if (get<std::uint64_t>(h, 0) != k_magic || get<std::uint32_t>(h, k_at_version) != k_version) {
    error = "no block header";
    return false;
  }
  if (get<std::uint32_t>(h, k_at_header_crc) != header_crc(h, o_.block_size) ||
      get<std::uint32_t>(h, k_at_block_size) != static_cast<std::uint32_t>(o_.block_size) ||
      get<std::uint64_t>(h, k_at_payload) != o_.block_bytes) {
    error = "damaged block header";
    return false;
  }
  if (get<std::uint64_t>(h, k_at_fingerprint) != o_.fingerprint) {
    error = "another model's or layout's block";
    return false;
  }
  return true;
}

void disk_block_file::clear_header(std::int64_t slot, unsigned char* staging) {
  std::memset(staging, 0, header_bytes_);
  auto op = [&](unsigned char* b, std::size_t n, off_t o) { return io_->pwrite(fd_, b, n, o); };
  (void)whole(op, staging, header_bytes_, offset(slot));  // best effort: the CRCs still guard
}

std::vector<disk_block_file::restored> disk_block_file::scan(scan_counts& dropped) {
  std::vector<restored> out;
  if (!o_.persist) return out;
  disk_staging h(header_bytes_);
  for (std::int64_t slot = 0; slot < o_.num_slots; ++slot) {
    const off_t at = offset(slot);
    if (at >= size_before_) break;  // never written by a previous run
    auto op = [&](unsigned char* b, std::size_t n, off_t o) { return io_->pread(fd_, b, n, o); };
    if (!whole(op, h.data(), header_bytes_, at)) {
      ++dropped.damaged;
      continue;
    }
    std::string error;
    if (get<std::uint64_t>(h.data(), 0) == 0) continue;  // an empty slot
    const bool ok = check_header(h.data(), error);
    if (!ok && error == "another model's or layout's block") {
      ++dropped.other_fingerprint;
    } else if (!ok || at + static_cast<off_t>(slot_bytes_) > size_before_) {  // or cut off
      ++dropped.damaged;
    }
    if (!ok || at + static_cast<off_t>(slot_bytes_) > size_before_) {
      clear_header(slot, h.data());
      continue;
    }
    restored r;
    r.slot = slot;
    r.key.hash = get<std::uint64_t>(h.data(), k_at_hash);
    r.key.parent = get<std::uint64_t>(h.data(), k_at_parent);
    r.key.tokens.resize(static_cast<std::size_t>(o_.block_size));
    std::memcpy(r.key.tokens.data(), h.data() + k_at_tokens, 4 * r.key.tokens.size());
    out.push_back(std::move(r));
  }
  return out;
}

bool disk_block_file::write(std::int64_t slot, const disk_block_key& key, const void* src,
                            disk_staging& staging, std::string& error) {
  return write(slot, key, std::vector<const void*>{src}, staging, error);
}

bool disk_block_file::read(std::int64_t slot, const disk_block_key& key, void* dst,
                           disk_staging& staging, std::string& error) {
  return read(slot, key, std::vector<void*>{dst}, staging, error);
}

std::size_t disk_block_file::part_bytes(std::size_t parts) const {
  if (parts == 0 || o_.block_bytes % parts != 0) {
    throw std::invalid_argument("disk_block_file: blocks of " + std::to_string(o_.block_bytes) +
                                " bytes do not split into " + std::to_string(parts) + " parts");
  }
  return o_.block_bytes / parts;
}

bool disk_block_file::write(std::int64_t slot, const disk_block_key& key,
                            const std::vector<const void*>& parts, disk_staging& staging,
                            std::string& error) {
  const std::size_t part = part_bytes(parts.size());
  if (key.tokens.size() != static_cast<std::size_t>(o_.block_size)) {
    throw std::invalid_argument("disk_block_file: a key of " + std::to_string(key.tokens.size()) +
                                " tokens for blocks of " + std::to_string(o_.block_size));
  }
  unsigned char* h = staging.data();
  std::memset(h, 0, header_bytes_);
  unsigned char* payload = h + header_bytes_;
  for (std::size_t i = 0; i < parts.size(); ++i) std::memcpy(payload + i * part, parts[i], part);
  std::memset(payload + o_.block_bytes, 0, slot_bytes_ - header_bytes_ - o_.block_bytes);
  put(h, 0, k_magic);
  put(h, k_at_version, k_version);
  put(h, k_at_block_size, static_cast<std::uint32_t>(o_.block_size));
  put(h, k_at_payload, static_cast<std::uint64_t>(o_.block_bytes));
  put(h, k_at_fingerprint, o_.fingerprint);
  put(h, k_at_hash, key.hash);
  put(h, k_at_parent, key.parent);
  put(h, k_at_payload_crc, crc(payload, o_.block_bytes));
  std::memcpy(h + k_at_tokens, key.tokens.data(), 4 * key.tokens.size());
  put(h, k_at_header_crc, header_crc(h, o_.block_size));
  auto op = [&](unsigned char* b, std::size_t n, off_t o) { return io_->pwrite(fd_, b, n, o); };
  if (!whole(op, h, slot_bytes_, offset(slot))) {
    error = sys_error("writing " + o_.path, errno == 0 ? EIO : errno);
    return false;
  }
  return true;
}

bool disk_block_file::read(std::int64_t slot, const disk_block_key& key,
                           const std::vector<void*>& parts, disk_staging& staging,
                           std::string& error) {
  const std::size_t part = part_bytes(parts.size());
  unsigned char* h = staging.data();
  auto op = [&](unsigned char* b, std::size_t n, off_t o) { return io_->pread(fd_, b, n, o); };
  if (!whole(op, h, slot_bytes_, offset(slot))) {
    error = errno == 0 ? "the file ends before the block" : sys_error("reading " + o_.path, errno);
    return false;
  }
  if (!check_header(h, error)) {
    if (error != "no block header") clear_header(slot, h);
    return false;
  }
  if (get<std::uint64_t>(h, k_at_hash) != key.hash ||
      get<std::uint64_t>(h, k_at_parent) != key.parent ||
      key.tokens.size() != static_cast<std::size_t>(o_.block_size) ||
      std::memcmp(h + k_at_tokens, key.tokens.data(), 4 * key.tokens.size()) != 0) {
    error = "the slot holds another block";
    return false;
  }
  const unsigned char* payload = h + header_bytes_;
  if (crc(payload, o_.block_bytes) != get<std::uint32_t>(h, k_at_payload_crc)) {
    error = "the block's checksum does not match (corrupted)";
    clear_header(slot, h);
    return false;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) std::memcpy(parts[i], payload + i * part, part);
  return true;
}

}  // namespace courier::storage
