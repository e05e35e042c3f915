#include "gpu/model/lora_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "base/fnv1a.hpp"
#include "gpu/dtype.hpp"
#include "gpu/model/json_file.hpp"
#include "gpu/model/safetensors.hpp"

namespace courier::model {

namespace {

using json = nlohmann::json;

using detail::fail;
using detail::shape_str;

// adapter_config.json, which a PEFT folder must have: its text.
std::string read_config(const std::string& path) {
  std::optional<std::string> text = detail::read_file_if_exists(path);
  if (!text) fail(path, "missing (a PEFT adapter folder has adapter_config.json)");
  return std::move(*text);
}

// Whether key is absent, null, false, empty or "none": a feature the adapter does not use.
bool unused(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return true;
  const json& v = cfg[key];
  return v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
         ((v.is_array() || v.is_object()) && v.empty()) ||
         (v.is_string() && (v.get<std::string>().empty() || v.get<std::string>() == "none"));
}

// Where the checkpoint keeps layer `layer`'s module (the PEFT tensor names add
// "base_model.model." before it and ".lora_A.weight" / ".lora_B.weight" after).
std::string module_path(const model_config& cfg, std::int32_t layer, const std::string& module) {
  if (cfg.hybrid()) return fmt::format("backbone.layers.{}.mixer.{}", layer, module);
  const bool attn =
      module == "q_proj" || module == "k_proj" || module == "v_proj" || module == "o_proj";
  return fmt::format("model.layers.{}.{}.{}", layer, attn ? "self_attn" : "mlp", module);
}

// A tensor as f32, whatever its float dtype. The data may start at any byte (safetensors does not
// align it: an odd header length puts it at an odd address), so elements are copied out, never
// read through a float or uint16_t pointer.
std::vector<float> to_f32(const gpu::host_tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  const auto* bytes = static_cast<const unsigned char*>(t.data);
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (t.type) {
      case gpu::dtype::f32:
        std::memcpy(&out[i], bytes + 4 * i, 4);
        break;
      case gpu::dtype::bf16:
        out[i] = gpu::bf16_to_f32(gpu::u16_at(t.data, i));
        break;
      default:
        out[i] = gpu::f16_to_f32(gpu::u16_at(t.data, i));
        break;
    }
  }
  return out;
}


}  // namespace

std::vector<lora_target> lora_targets(const model_config& cfg, std::int32_t layer) {
  const std::int64_t H = cfg.hidden_size, I = cfg.intermediate_size, D = cfg.head_dim;
  const std::int64_t NQ = cfg.num_heads * D, NK = cfg.num_kv_heads * D;
  const lora_target qkv{
      lora_linear::qkv, H, NQ + 2 * NK, {"q_proj", "k_proj", "v_proj"}, {NQ, NQ + NK, NQ + 2 * NK}};
  const lora_target o{lora_linear::o, NQ, H, {"o_proj"}, {H}};
  const lora_target down{lora_linear::down, I, H, {"down_proj"}, {H}};
  if (!cfg.hybrid()) {
    return {qkv, o, {lora_linear::gate_up, H, 2 * I, {"gate_proj", "up_proj"}, {I, 2 * I}}, down};
  }
  switch (cfg.layers.at(static_cast<std::size_t>(layer))) {
    case layer_kind::attention:
      return {qkv, o};
    case layer_kind::mlp:
      return {{lora_linear::up, H, I, {"up_proj"}, {I}}, down};
    case layer_kind::mamba: {
      const std::int64_t P = cfg.mamba.in_proj_dim(), inter = cfg.mamba.intermediate();
      return {{lora_linear::in_proj, H, P, {"in_proj"}, {P}},
              {lora_linear::out_proj, inter, H, {"out_proj"}, {H}}};
    }
  }
  return {};
}

std::size_t lora_adapter::bytes() const {
  std::size_t n = 0;
  for (const auto& layer : layers) {
    for (const linear& l : layer) {
      for (const part& p : l.parts) n += (p.a.size() + p.b.size()) * sizeof(float);
    }
  }
  return n;
}

bool lora_adapter::targets(lora_linear l) const {
  for (const auto& layer : layers) {
    for (const part& p : layer[static_cast<std::size_t>(l)].parts) {
      if (!p.a.empty()) return true;
    }
  }
  return false;
}

std::uint64_t max_adapter_file_bytes(const model_config& cfg, std::int64_t rank) {
  std::uint64_t weights = 0;
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) {
    for (const lora_target& t : lora_targets(cfg, l)) {
      // Every module's A [rank, in] and B [its columns, rank], in f32 (the widest dtype read).
      weights += static_cast<std::uint64_t>(rank) *
                 static_cast<std::uint64_t>(t.in * static_cast<std::int64_t>(t.modules.size()) +
                                            t.out) *
                 4;
    }
  }
  return weights + 8 + max_header_bytes;
}

namespace {

// adapter_config.json's text, checked against what courier serves exactly and against `cfg`'s
// modules: the rank and the scale folded into B.
struct lora_config {
  std::int64_t rank = 0;
  double scale = 0;
};

lora_config check_lora_config(const std::string& config_path, const std::string& config_text,
                              const model_config& cfg, std::int32_t max_rank) {
  const json c = detail::parse_json_object(config_path, config_text);
  auto field = [&](const char* key) -> const json& {
    if (!c.contains(key)) fail(config_path, fmt::format("missing field \"{}\"", key));
    return c[key];
  };
  const json& type = field("peft_type");
  if (!type.is_string() || type.get<std::string>() != "LORA") {
    fail(config_path, fmt::format("peft_type {} is not supported (LORA is)", type.dump()));
  }
  // What would change the math beyond W + scale * B A, refused rather than served wrong.
  for (const char* key : {"modules_to_save", "use_dora", "fan_in_fan_out", "rank_pattern",
                          "alpha_pattern", "layer_replication", "target_parameters"}) {
    if (!unused(c, key)) {
      fail(config_path, fmt::format("\"{}\": {} is not supported", key, c[key].dump()));
    }
  }
  if (!unused(c, "bias")) {
    fail(config_path, fmt::format("\"bias\": {} is not supported (\"none\" is)", c["bias"].dump()));
  }
  const json& r = field("r");
  if (!r.is_number_integer() || r.get<std::int64_t>() < 1) {
    fail(config_path, fmt::format("\"r\" must be a positive integer, got {}", r.dump()));
  }
  const auto rank = r.get<std::int64_t>();
  if (rank > max_rank) {
    fail(config_path, fmt::format("rank r = {} is over lora.max_rank ({})", rank, max_rank));
  }
  const json& alpha = field("lora_alpha");
  if (!alpha.is_number() || !std::isfinite(alpha.get<double>())) {
    fail(config_path, fmt::format("\"lora_alpha\" must be a number, got {}", alpha.dump()));
  }
  const bool rslora =
      c.contains("use_rslora") && c["use_rslora"].is_boolean() && c["use_rslora"].get<bool>();
  const double scale = alpha.get<double>() /
                       (rslora ? std::sqrt(static_cast<double>(rank)) : static_cast<double>(rank));
  // Every module this model has, and the names the config may target.
  std::map<std::string, bool> known;
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) {
    for (const lora_target& t : lora_targets(cfg, l)) {
      for (const std::string& m : t.modules) known[m] = true;
    }
  }
  if (c.contains("target_modules") && c["target_modules"].is_array()) {
    for (const json& m : c["target_modules"]) {
      const std::string s = m.is_string() ? m.get<std::string>() : m.dump();
      const std::string last = s.substr(s.rfind('.') == std::string::npos ? 0 : s.rfind('.') + 1);
      if (!known.count(last)) {
        std::string names;
        for (const auto& [k, v] : known) names += (names.empty() ? "" : ", ") + k;
        fail(config_path, fmt::format("target module \"{}\" is not one courier adapts in {} "
                                      "({})",
                                      s, cfg.architecture_name, names));
      }
    }
  }

  return {rank, scale};
}

// The A and B tensors of `st` (the file `file`) into `out`'s layers, each checked against the
// module it adapts; B scaled by `scale`. Each A needs its B and each B its A.
void read_lora_tensors(const std::string& file, const safetensors_file& st,
                       const model_config& cfg, std::int64_t rank, double scale,
                       lora_adapter& out) {
  // Each tensor name the model can have, mapped to (layer, linear, part, is B).
  struct place {
    std::int32_t layer;
    const lora_target* target;
    std::size_t part;
    bool b;
  };
  std::vector<std::vector<lora_target>> targets;
  std::map<std::string, place> places;
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) targets.push_back(lora_targets(cfg, l));
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) {
    for (const lora_target& t : targets[static_cast<std::size_t>(l)]) {
      for (std::size_t p = 0; p < t.modules.size(); ++p) {
        const std::string base = "base_model.model." + module_path(cfg, l, t.modules[p]);
        places[base + ".lora_A.weight"] = {l, &t, p, false};
        places[base + ".lora_B.weight"] = {l, &t, p, true};
      }
    }
  }
  for (const std::string& tensor : st.names()) {
    const auto it = places.find(tensor);
    if (it == places.end()) {
      fail(file, fmt::format("tensor {} is not a LoRA A or B of a module courier adapts in {} "
                             "(names look like base_model.model.{}.lora_A.weight)",
                             tensor, cfg.architecture_name, module_path(cfg, 0, "o_proj")));
    }
    const place& at = it->second;
    const gpu::host_tensor& t = st.tensor(tensor);
    if (t.type != gpu::dtype::f32 && t.type != gpu::dtype::bf16 && t.type != gpu::dtype::f16) {
      fail(file, fmt::format("tensor {} has dtype {}; LoRA weights must be F32, BF16 or F16",
                             tensor, gpu::dtype_name(t.type)));
    }
    const std::int64_t begin = at.part ? at.target->part_end[at.part - 1] : 0;
    const std::int64_t cols = at.target->part_end[at.part] - begin;
    const std::vector<std::int64_t> want = at.b ? std::vector<std::int64_t>{cols, rank}
                                                : std::vector<std::int64_t>{rank, at.target->in};
    if (t.shape != want) {
      fail(file, fmt::format("tensor {} has shape {}, expected {} (r = {} in adapter_config.json, "
                             "and the base model's shapes)",
                             tensor, shape_str(t.shape), shape_str(want), rank));
    }
    std::vector<float> v = to_f32(t);
    for (float x : v) {
      if (!std::isfinite(x)) fail(file, fmt::format("tensor {} holds a NaN or infinity", tensor));
    }
    auto& parts =
        out.layers[static_cast<std::size_t>(at.layer)][static_cast<std::size_t>(at.target->linear)]
            .parts;
    parts.resize(at.target->modules.size());
    if (at.b) {
      for (float& x : v) x = static_cast<float>(static_cast<double>(x) * scale);
      parts[at.part].b = std::move(v);
    } else {
      parts[at.part].a = std::move(v);
      ++out.num_modules;
    }
  }
  // Each A needs its B and each B its A.
  for (std::int32_t l = 0; l < cfg.num_layers; ++l) {
    for (const lora_target& t : targets[static_cast<std::size_t>(l)]) {
      const auto& parts =
          out.layers[static_cast<std::size_t>(l)][static_cast<std::size_t>(t.linear)].parts;
      for (std::size_t p = 0; p < parts.size(); ++p) {
        if (parts[p].a.empty() != parts[p].b.empty()) {
          fail(file, fmt::format("tensor base_model.model.{}.{} is missing (its {} is there)",
                                 module_path(cfg, l, t.modules[p]),
                                 parts[p].a.empty() ? "lora_A.weight" : "lora_B.weight",
                                 parts[p].a.empty() ? "lora_B" : "lora_A"));
        }
      }
    }
  }
}

}  // namespace

std::shared_ptr<const lora_adapter> load_lora_adapter(const std::string& name,
                                                      const std::string& dir,
                                                      const model_config& cfg,
                                                      std::int32_t max_rank) {
  const std::string config_path = dir + "/adapter_config.json";
  const std::string config_text = read_config(config_path);
  const lora_config c = check_lora_config(config_path, config_text, cfg, max_rank);
  auto out = std::make_shared<lora_adapter>();
  out->name = name;
  out->dir = dir;
  out->rank = static_cast<std::int32_t>(c.rank);
  out->scale = static_cast<float>(c.scale);
  out->layers.resize(static_cast<std::size_t>(cfg.num_layers));
  const std::string file = dir + "/adapter_model.safetensors";
  const safetensors_file st = safetensors_file::open(file, max_adapter_file_bytes(cfg, c.rank));
  base::fnv1a64 fp;  // every byte read: the config and the whole weights file
  fp.add(config_text);
  fp.add(st.bytes(), st.size_bytes());
  out->fingerprint = fp.value();
  read_lora_tensors(file, st, cfg, c.rank, c.scale, *out);
  if (out->num_modules == 0) fail(file, "no LoRA tensors");
  return out;
}

}  // namespace courier::model
