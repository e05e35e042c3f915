#include "gpu/model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "gpu/model/json_file.hpp"

namespace courier::model {
namespace {

using json = nlohmann::json;
using detail::fail;

// Files smaller than this load in well under a second: no progress line for them.
constexpr std::uint64_t progress_min_bytes = 1ull << 30;

std::optional<gpu::dtype> parse_dtype(const std::string& s) {
  if (s == "F32") return gpu::dtype::f32;
  if (s == "BF16") return gpu::dtype::bf16;
  if (s == "F16") return gpu::dtype::f16;
  if (s == "I32") return gpu::dtype::i32;
  return std::nullopt;
}

// A JSON integer in [0, max], or nullopt (wrong type, negative, too large).
std::optional<std::uint64_t> as_count(const json& v, std::uint64_t max) {
  if (!v.is_number_integer()) return std::nullopt;
  if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) return std::nullopt;
  const auto x = v.get<std::uint64_t>();
  if (x > max) return std::nullopt;
  return x;
}

struct entry {
  std::string name;
  gpu::host_tensor tensor;
  std::uint64_t begin = 0;  // byte offsets into the data region
  std::uint64_t end = 0;
};

// Validates one header entry against a data region of data_bytes; `data` is its first byte.
entry parse_entry(const std::string& path, const std::string& name, const json& v, const char* data,
                  std::uint64_t data_bytes) {
  if (!v.is_object()) fail(path, fmt::format("tensor {} is not an object", name));
  entry e;
  e.name = name;

  auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) fail(path, fmt::format("tensor {} has no dtype", name));
  const auto type = parse_dtype(dt->get<std::string>());
  if (!type) {
    fail(path, fmt::format("tensor {} has unsupported dtype {}", name, dt->get<std::string>()));
  }
  e.tensor.type = *type;

  auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array()) {
    fail(path, fmt::format("tensor {} has no shape array", name));
  }
  // Every prefix product must fit in int64, so host_tensor::numel() cannot overflow.
  std::uint64_t numel = 1;
  constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (const auto& d : *shape) {
    const auto dim = as_count(d, int64_max);
    if (!dim) {
      fail(path,
           fmt::format("tensor {} has shape {}: dimensions must be non-negative 64-bit integers",
                       name, shape->dump()));
    }
    if (*dim != 0 && numel > int64_max / *dim) {
      fail(path, fmt::format("tensor {} has shape {}, too many elements", name, shape->dump()));
    }
    numel *= *dim;
    e.tensor.shape.push_back(static_cast<std::int64_t>(*dim));
  }

  auto offsets = v.find("data_offsets");
  std::optional<std::uint64_t> begin, end;
  if (offsets != v.end() && offsets->is_array() && offsets->size() == 2) {
    begin = as_count((*offsets)[0], std::numeric_limits<std::uint64_t>::max());
    end = as_count((*offsets)[1], std::numeric_limits<std::uint64_t>::max());
  }
  if (offsets == v.end()) fail(path, fmt::format("tensor {} has no data_offsets", name));
  if (!begin || !end || *begin > *end) {
    fail(path, fmt::format("tensor {} has data_offsets {}: need [begin, end] with begin <= end",
                           name, offsets->dump()));
  }
  if (*end > data_bytes) {
    fail(path, fmt::format("tensor {} extends past the end of the file (truncated?): its data "
                           "ends at byte {} of a {}-byte data region",
                           name, *end, data_bytes));
  }
  const std::uint64_t size = *end - *begin;
  const std::uint64_t elem = gpu::dtype_size(*type);
  if (numel > size / elem || numel * elem != size) {
    fail(path, fmt::format("tensor {} has {} bytes, but shape {} of {} needs {} elements of {} "
                           "bytes",
                           name, size, shape->dump(), gpu::dtype_name(*type), numel, elem));
  }
  e.begin = *begin;
  e.end = *end;
  e.tensor.data = data + *begin;
  e.tensor.size_bytes = static_cast<std::size_t>(size);
  return e;
}

// Tensors must not share bytes. Empty tensors occupy nothing, so they never overlap.
void check_no_overlap(const std::string& path, std::vector<const entry*> es) {
  es.erase(std::remove_if(es.begin(), es.end(), [](const entry* e) { return e->begin == e->end; }),
           es.end());
  std::sort(es.begin(), es.end(), [](const entry* a, const entry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  for (std::size_t i = 1; i < es.size(); ++i) {
    if (es[i]->begin < es[i - 1]->end) {
      fail(path,
           fmt::format("tensors {} and {} overlap (bytes [{}, {}) and [{}, {}))", es[i - 1]->name,
                       es[i]->name, es[i - 1]->begin, es[i - 1]->end, es[i]->begin, es[i]->end));
    }
  }
}

// Closes a descriptor on every path out of open().
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

safetensors_file safetensors_file::open(const std::string& path, std::uint64_t max_bytes) {
  std::uint64_t file_bytes = 0;
  fd_guard fd{detail::open_regular_file(path, max_bytes, &file_bytes)};
  if (fd.fd < 0) fail(path, fmt::format("cannot open ({})", std::strerror(ENOENT)));
  if (file_bytes < 8) {
    fail(path, fmt::format("file is {} bytes, too short for a safetensors header (truncated?)",
                           file_bytes));
  }

  safetensors_file f;
  f.path_ = path;
  void* map =
      ::mmap(nullptr, static_cast<std::size_t>(file_bytes), PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (map == MAP_FAILED) fail(path, fmt::format("cannot mmap ({})", std::strerror(errno)));
  // From here on f's destructor unmaps, also when validation below throws.
  f.map_ = map;
  f.size_ = static_cast<std::size_t>(file_bytes);
  const auto* bytes = static_cast<const unsigned char*>(map);

  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | bytes[i];
  if (header_bytes > file_bytes - 8) {
    fail(path, fmt::format("header length {} is larger than the {} bytes after it (truncated?)",
                           header_bytes, file_bytes - 8));
  }
  if (header_bytes > max_header_bytes) {
    fail(path, fmt::format("header length {} is implausibly large (limit {})", header_bytes,
                           max_header_bytes));
  }

  const char* header = reinterpret_cast<const char*>(bytes + 8);
  auto parsed = base::parse_json_text<json>(std::string_view(header, header_bytes),
                                            detail::max_json_file_depth);
  if (parsed.error == base::json_text_error::too_deep) {
    fail(path, fmt::format("header nests more than {} levels deep", detail::max_json_file_depth));
  }
  if (!parsed) fail(path, fmt::format("header is not valid JSON: {}", parsed.message));
  json root = std::move(parsed.value);
  if (!root.is_object()) {
    fail(path, fmt::format("header is a JSON {}, not an object", root.type_name()));
  }

  const char* data = header + header_bytes;
  const std::uint64_t data_bytes = file_bytes - 8 - header_bytes;
  std::vector<entry> entries;
  entries.reserve(root.size());
  for (const auto& [name, v] : root.items()) {
    if (name == "__metadata__") continue;
    entries.push_back(parse_entry(path, name, v, data, data_bytes));
  }
  std::vector<const entry*> ptrs;
  for (const auto& e : entries) ptrs.push_back(&e);
  check_no_overlap(path, std::move(ptrs));

  for (auto& e : entries) f.tensors_.emplace(e.name, std::move(e.tensor));
  return f;
}

safetensors_file::safetensors_file(safetensors_file&& o) noexcept
    : path_(std::move(o.path_)),
      map_(std::exchange(o.map_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      tensors_(std::move(o.tensors_)) {}

safetensors_file& safetensors_file::operator=(safetensors_file&& o) noexcept {
  if (this != &o) {
    if (map_ != nullptr) ::munmap(map_, size_);
    path_ = std::move(o.path_);
    map_ = std::exchange(o.map_, nullptr);
    size_ = std::exchange(o.size_, 0);
    tensors_ = std::move(o.tensors_);
  }
  return *this;
}

safetensors_file::~safetensors_file() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

std::vector<std::string> safetensors_file::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

const gpu::host_tensor& safetensors_file::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail(path_, fmt::format("missing tensor {}", name));
  return it->second;
}

weight_store weight_store::open(const std::string& dir) {
  weight_store ws;
  ws.dir_ = dir;
  auto map_file = [&](const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 &&
        static_cast<std::uint64_t>(st.st_size) > progress_min_bytes) {
      fmt::print(stderr, "loading {} ({} MB)\n", path, st.st_size >> 20);
    }
    ws.files_.push_back(safetensors_file::open(path));
    return ws.files_.size() - 1;
  };

  const std::string index_path = dir + "/model.safetensors.index.json";
  const std::optional<std::string> index_text = detail::read_file_if_exists(index_path);
  if (!index_text) {
    const std::string single = dir + "/model.safetensors";
    if (!file_exists(single)) fail(dir, "no model.safetensors or model.safetensors.index.json");
    const std::size_t i = map_file(single);
    for (const auto& name : ws.files_[i].names()) ws.where_.emplace(name, i);
    return ws;
  }

  const json index = detail::parse_json_object(index_path, *index_text);
  const auto weight_map = index.find("weight_map");
  if (weight_map == index.end() || !weight_map->is_object()) {
    fail(index_path, "missing object field 'weight_map'");
  }

  std::map<std::string, std::size_t> shard_index;  // shard file name -> index into files_
  for (const auto& [name, shard] : weight_map->items()) {
    if (!shard.is_string()) {
      fail(index_path,
           fmt::format("weight_map entry for {} must be a file name, got {}", name, shard.dump()));
    }
    const auto file = shard.get<std::string>();
    // Shards sit next to the index; a path that leaves the folder is not a shard.
    if (file.empty() || file.find('/') != std::string::npos) {
      fail(index_path,
           fmt::format("weight_map entry for {} names '{}', not a file in {}", name, file, dir));
    }
    auto it = shard_index.find(file);
    if (it == shard_index.end()) {
      const std::string shard_path = dir + "/" + file;
      if (!file_exists(shard_path)) {
        fail(index_path,
             fmt::format("weight_map names shard {} (for {}), which does not exist", file, name));
      }
      it = shard_index.emplace(file, map_file(shard_path)).first;
    }
    if (!ws.files_[it->second].contains(name)) {
      fail(index_path,
           fmt::format("tensor {} is mapped to shard {}, which does not contain it", name, file));
    }
    ws.where_.emplace(name, it->second);
  }
  return ws;
}

const gpu::host_tensor& weight_store::tensor(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) fail(dir_, fmt::format("missing tensor {}", name));
  return files_[it->second].tensor(name);
}

const std::string& weight_store::file_of(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) fail(dir_, fmt::format("missing tensor {}", name));
  return files_[it->second].path();
}

std::size_t weight_store::total_bytes() const {
  std::size_t total = 0;
  for (const auto& f : files_) total += f.size_bytes();
  return total;
}

}  // namespace courier::model
