#pragma once
// LoRA adapters in PEFT's format (adapter_config.json + adapter_model.safetensors), read into
// host memory and checked against the base model they adapt; and which linears of a layer an
// adapter may target (lora_targets), where the model keeps their weights' slot pools.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/model/model_config.hpp"

namespace courier::model {

// The linears of a layer that LoRA adapts, as the model stores them (fused where it fuses).
enum class lora_linear : std::uint8_t { qkv, o, gate_up, up, down, in_proj, out_proj };
inline constexpr std::size_t num_lora_linears = 7;

// One linear a layer has: its input width, its output columns cut into the checkpoint's
// modules (q_proj, k_proj, v_proj for the fused qkv; gate_proj, up_proj for gate_up; one
// otherwise), module p owning the columns [p ? part_end[p - 1] : 0, part_end[p]).
struct lora_target {
  lora_linear linear = lora_linear::qkv;
  std::int64_t in = 0;
  std::int64_t out = 0;
  std::vector<std::string> modules;
  std::vector<std::int64_t> part_end;
};

// The linears of layer `layer` of the model `cfg` describes.
std::vector<lora_target> lora_targets(const model_config& cfg, std::int32_t layer);

// An adapter's weights, f32, with the scale folded into B. Per layer and linear, one part per
// module of the linear (lora_target::modules): A [rank, in] and B [columns, rank], both empty
// where the adapter does not target that module (it adds nothing there).
struct lora_adapter {
  std::string name;
  std::string dir;
  // FNV-1a 64 of every byte read (adapter_config.json, then adapter_model.safetensors whole):
  // what computed an adapter's KV entries, whatever name it is served under. Caches key an
  // adapter's entries by it (cache::adapter_namespace_id), never by the name alone.
  std::uint64_t fingerprint = 0;
  std::int32_t rank = 0;
  float scale = 0.0f;  // lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora
  struct part {
    std::vector<float> a, b;
  };
  struct linear {
    std::vector<part> parts;  // empty: the linear is not targeted
  };
  std::vector<std::array<linear, num_lora_linears>> layers;
  std::size_t num_modules = 0;  // modules adapted (A/B pairs read)
  std::size_t bytes() const;    // of the host copy
  // Whether any layer's `l` has a targeted module.
  bool targets(lora_linear l) const;
};

// The largest adapter_model.safetensors an adapter of `rank` for `cfg` can need: every linear
// adapted, in f32, plus the largest header safetensors_file reads. A larger file is refused
// before it is mapped.
std::uint64_t max_adapter_file_bytes(const model_config& cfg, std::int64_t rank);

// Reads DIR as adapter `name` of the base model `cfg`. Only regular files are read (a FIFO or
// a device such as /dev/zero at either path is refused at once, naming it), each bounded in
// size (detail::max_json_file_bytes; max_adapter_file_bytes). Throws model_error naming the file and
// the field or tensor on anything courier cannot serve exactly: a rank over max_rank
// (lora.max_rank), a peft_type other than LORA, modules_to_save, DoRA, biases, fan_in_fan_out,
// rank_pattern or alpha_pattern, a target module courier does not adapt, a tensor it does not
// know, of the wrong shape or dtype, or an A without its B.
std::shared_ptr<const lora_adapter> load_lora_adapter(const std::string& name,
                                                      const std::string& dir,
                                                      const model_config& cfg,
                                                      std::int32_t max_rank);

}  // namespace courier::model
