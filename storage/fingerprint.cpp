#include "storage/fingerprint.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace courier::storage {

void fingerprint::add_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    add(std::string("missing"));
    return;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  add(bytes);
}

void fingerprint::add_weights_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  add(size);
  std::uint64_t header = 0;
  in.seekg(0);
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (!in || header > size - 8) throw std::runtime_error(path + ": not a safetensors file");
  std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(header, 64 << 20)));
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  add(buf.data(), static_cast<std::size_t>(in.gcount()));
  constexpr std::uint64_t window = 64 << 10, samples = 16;
  buf.resize(window);
  for (std::uint64_t k = 0; k < samples; ++k) {
    const std::uint64_t at = size > window ? (size - window) / (samples - 1) * k : 0;
    in.clear();
    in.seekg(static_cast<std::streamoff>(at));
    in.read(buf.data(), static_cast<std::streamsize>(window));
    add(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
}

namespace {

void add_weights(fingerprint& f, const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> weights;
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().extension() == ".safetensors") weights.push_back(e.path().string());
  }
  std::sort(weights.begin(), weights.end());
  for (const std::string& w : weights) {
    f.add(fs::path(w).filename().string());
    f.add_weights_file(w);
  }
}

}  // namespace

std::uint64_t model_fingerprint(const std::string& folder, const std::string& layout) {
  namespace fs = std::filesystem;
  fingerprint f;
  f.add(layout);
  for (const char* name : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
    f.add_file((fs::path(folder) / name).string());
  }
  add_weights(f, folder);
  return f.value();
}

std::uint64_t weights_fingerprint(const std::string& folder) {
  fingerprint f;
  f.add(std::string("weights"));
  f.add_file((std::filesystem::path(folder) / "config.json").string());
  add_weights(f, folder);
  return f.value();
}

std::uint64_t tokenizer_fingerprint(const std::string& folder) {
  namespace fs = std::filesystem;
  fingerprint f;
  f.add(std::string("tokenizer"));
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    f.add_file((fs::path(folder) / name).string());
  }
  return f.value();
}

}  // namespace courier::storage
