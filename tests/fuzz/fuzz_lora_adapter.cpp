// Fuzz target: a LoRA adapter folder from untrusted bytes, as lora.adapters or a load request
// names one. Byte 0 holds flags; bytes 1-2 (little endian) the length of adapter_config.json
// (clamped to what follows), then its text; the rest is adapter_model.safetensors. Both are
// written into this process's temporary folder and read by load_lora_adapter (max_rank 64)
// against the bundled tiny-qwen3 or, with flag bit 0, tiny-hybrid (NemotronH: its in_proj and
// out_proj are targets too). Flag bits 1-3 of 1 to 4 put a FIFO or a symlink to /dev/zero at
// one of the two paths instead of the file.
//
// Allowed (lora_adapter.hpp): an adapter, or model_error. A finding: any other exception; an
// adapter that breaks its invariants (rank in 1..max_rank; per layer, linear and module of
// lora_targets an A [rank, in] and a B [columns, rank], or neither; num_modules the modules
// read; the fingerprint of the bytes written); an adapter from a FIFO or a device, or an error
// for one at adapter_config.json that does not name it; a crash, a sanitizer report, a hang (a
// FIFO waited on) or memory past the limit (a device read whole).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "base/fnv1a.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "gpu/model/model_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using courier::fuzz::finding;
namespace model = courier::model;

constexpr std::int32_t max_rank = 64;  // lora.max_rank's default

// Owned for the whole process (libFuzzer never returns from its loop).
const model::model_config* dense = nullptr;   // tiny-qwen3
const model::model_config* hybrid = nullptr;  // tiny-hybrid
std::string dir;                              // this process's folder under /tmp
std::string config_path, weights_path;

// A regular file with `bytes`, a FIFO or a symlink to /dev/zero at path, whatever was there.
void put(const std::string& path, std::string_view bytes, bool fifo, bool zero) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) finding("cannot remove " + path);
  if (fifo) {
    if (::mkfifo(path.c_str(), 0600) != 0) finding("cannot make the FIFO " + path);
  } else if (zero) {
    if (::symlink("/dev/zero", path.c_str()) != 0) finding("cannot link " + path);
  } else {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) finding("cannot write " + path);
  }
}

void remove_dir() {
  ::unlink(config_path.c_str());
  ::unlink(weights_path.c_str());
  ::rmdir(dir.c_str());
}

// The invariants of an adapter load_lora_adapter returned for `cfg` from these bytes.
void check(const model::lora_adapter& a, const model::model_config& cfg, std::string_view config,
           std::string_view weights) {
  if (a.rank < 1 || a.rank > max_rank) finding("rank " + std::to_string(a.rank) + " out of range");
  if (a.layers.size() != static_cast<std::size_t>(cfg.num_layers)) finding("wrong layer count");
  courier::base::fnv1a64 fp;
  fp.add(config);
  fp.add(weights);
  if (a.fingerprint == 0 || a.fingerprint != fp.value()) {
    finding("the fingerprint is not FNV-1a of the bytes read");
  }
  std::size_t modules = 0;
  std::array<bool, model::num_lora_linears> targeted{};
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) {
    std::array<bool, model::num_lora_linears> has{};
    for (const model::lora_target& t : model::lora_targets(cfg, l)) {
      const auto i = static_cast<std::size_t>(t.linear);
      has[i] = true;
      const auto& parts = a.layers[static_cast<std::size_t>(l)][i].parts;
      if (!parts.empty() && parts.size() != t.modules.size()) {
        finding("layer " + std::to_string(l) + ": a linear with the wrong number of parts");
      }
      for (std::size_t p = 0; p < parts.size(); ++p) {
        if (parts[p].a.empty() && parts[p].b.empty()) continue;
        const std::int64_t cols = t.part_end[p] - (p ? t.part_end[p - 1] : 0);
        if (parts[p].a.size() != static_cast<std::size_t>(a.rank * t.in) ||
            parts[p].b.size() != static_cast<std::size_t>(cols * a.rank)) {
          finding("layer " + std::to_string(l) + " " + t.modules[p] + ": A or B of the wrong size");
        }
        ++modules;
        targeted[i] = true;
      }
    }
    for (std::size_t i = 0; i < model::num_lora_linears; ++i) {
      if (!has[i] && !a.layers[static_cast<std::size_t>(l)][i].parts.empty()) {
        finding("layer " + std::to_string(l) + ": parts for a linear the layer does not have");
      }
    }
  }
  if (modules == 0 || modules != a.num_modules) {
    finding("num_modules " + std::to_string(a.num_modules) + ", but " + std::to_string(modules) +
            " modules read");
  }
  for (std::size_t i = 0; i < model::num_lora_linears; ++i) {
    if (a.targets(static_cast<model::lora_linear>(i)) != targeted[i]) {
      finding("targets() differs from the parts read");
    }
  }
}

void run(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return;
  const std::uint8_t flags = data[0];
  const std::size_t rest = size - 3;
  const std::size_t config_len = std::min<std::size_t>(data[1] | (data[2] << 8), rest);
  const std::string_view config(reinterpret_cast<const char*>(data) + 3, config_len);
  const std::string_view weights(config.data() + config_len, rest - config_len);
  const model::model_config& cfg = flags & 1 ? *hybrid : *dense;
  // Flag bits 1-3: 1 or 2 a FIFO at adapter_config.json or adapter_model.safetensors, 3 or 4 a
  // symlink to /dev/zero there; otherwise both files hold the input's bytes.
  const int hostile = (flags >> 1) & 7;
  put(config_path, config, hostile == 1, hostile == 3);
  put(weights_path, weights, hostile == 2, hostile == 4);
  std::shared_ptr<const model::lora_adapter> adapter;
  try {
    adapter = model::load_lora_adapter("fuzz", dir, cfg, max_rank);
  } catch (const model::model_error& e) {
    if ((hostile == 1 || hostile == 3) &&
        std::string_view(e.what()).find(config_path) == std::string_view::npos) {
      finding("the error for a FIFO or device adapter_config.json does not name it: " +
              std::string(e.what()));
    }
    return;
  }
  if (hostile >= 1 && hostile <= 4) finding("an adapter read from a FIFO or a device");
  if (adapter == nullptr) finding("load_lora_adapter returned no adapter");
  if (adapter->name != "fuzz" || adapter->dir != dir) finding("the adapter's name or dir differs");
  check(*adapter, cfg, config, weights);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dense = new model::model_config(
      model::load_model_config(courier::fuzz::data_path("models/tiny-qwen3")));
  hybrid = new model::model_config(
      model::load_model_config(courier::fuzz::data_path("models/tiny-hybrid")));
  if (!hybrid->hybrid()) finding("tiny-hybrid loaded as a dense model");
  char path[] = "/tmp/courier-fuzz-lora-XXXXXX";
  if (::mkdtemp(path) == nullptr) finding("cannot make a folder under /tmp");
  dir = path;
  config_path = dir + "/adapter_config.json";
  weights_path = dir + "/adapter_model.safetensors";
  std::atexit(remove_dir);
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(data, size);
  } catch (...) {
    courier::fuzz::undocumented_exception("load_lora_adapter");
  }
  return 0;
}
