#pragma once
// Memory-mapped safetensors files: one file, or the shards of model.safetensors.index.json.
// Every header is validated before any tensor is handed out (length, JSON, dtype, shape against
// byte range, range inside the file, no overlaps), so a truncated or corrupt file is a
// model_error naming the file, never a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/model/model_config.hpp"
#include "gpu/tensor.hpp"

namespace courier::model {

// Real headers are tens of kilobytes; a length beyond this is corruption, not a model.
constexpr std::uint64_t max_header_bytes = 100ull << 20;

// One mapped file. Move-only; unmaps on destruction.
class safetensors_file {
 public:
  // Throws model_error on an unreadable, truncated or malformed file, on anything but a regular
  // file, and on a file over `max_bytes` (0: any size).
  static safetensors_file open(const std::string& path, std::uint64_t max_bytes = 0);
  safetensors_file(safetensors_file&&) noexcept;
  safetensors_file& operator=(safetensors_file&&) noexcept;
  ~safetensors_file();

  const std::string& path() const { return path_; }
  // Tensor names in the file, sorted.
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Borrowed view into the mapping; valid while this object lives. Throws if absent.
  const gpu::host_tensor& tensor(const std::string& name) const;
  std::size_t size_bytes() const { return size_; }
  // The whole file's bytes (header and data), valid while this object lives.
  const void* bytes() const { return map_; }

 private:
  safetensors_file() = default;
  std::string path_;
  void* map_ = nullptr;  // Owned (mmap).
  std::size_t size_ = 0;
  std::map<std::string, gpu::host_tensor> tensors_;
};

// All weights of a model folder: model.safetensors, or the shards named by
// model.safetensors.index.json (every name in its weight_map must be in the shard it names).
class weight_store {
 public:
  // Throws model_error. progress (may be empty) is told each file as it is mapped.
  static weight_store open(const std::string& dir);

  bool contains(const std::string& name) const { return where_.count(name) != 0; }
  // Throws model_error "DIR: missing tensor NAME" when absent.
  const gpu::host_tensor& tensor(const std::string& name) const;
  // The file a tensor lives in, for error messages.
  const std::string& file_of(const std::string& name) const;
  std::size_t total_bytes() const;

 private:
  std::string dir_;
  std::vector<safetensors_file> files_;
  std::map<std::string, std::size_t> where_;  // tensor name -> index into files_
};

}  // namespace courier::model
