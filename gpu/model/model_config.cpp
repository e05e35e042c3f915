#include "gpu/model/model_config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/dtype.hpp"
#include "gpu/model/json_file.hpp"

namespace courier::model {
namespace {

using json = nlohmann::json;
using detail::fail;
using detail::parse_json_object;
using detail::read_file_if_exists;

// A present, non-null field (HF writes null for "use the default").
const json* field(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

// What a config file says, with the file's path for every error.
struct config_file {
  std::string path;
  json root;

  std::int64_t integer(const json& v, const std::string& name, std::int64_t min,
                       std::int64_t max) const {
    if (!v.is_number_integer()) {
      fail(path,
           fmt::format("field '{}' must be an integer, got {} {}", name, v.type_name(), v.dump()));
    }
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(path, fmt::format("field '{}' is {}, larger than {}", name, v.dump(), max));
    }
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min) {
      fail(path, min == 1 ? fmt::format("field '{}' must be positive, got {}", name, x)
                          : fmt::format("field '{}' must be at least {}, got {}", name, min, x));
    }
    if (x > max) fail(path, fmt::format("field '{}' is {}, larger than {}", name, x, max));
    return x;
  }

  std::int32_t required_size(const char* name) const {
    const json* v = field(root, name);
    if (v == nullptr) fail(path, fmt::format("missing field '{}'", name));
    return static_cast<std::int32_t>(
        integer(*v, name, 1, std::numeric_limits<std::int32_t>::max()));
  }

  std::optional<std::int32_t> optional_size(const char* name) const {
    const json* v = field(root, name);
    if (v == nullptr) return std::nullopt;
    return static_cast<std::int32_t>(
        integer(*v, name, 1, std::numeric_limits<std::int32_t>::max()));
  }

  bool optional_bool(const char* name, bool fallback) const {
    const json* v = field(root, name);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) {
      fail(path, fmt::format("field '{}' must be true or false, got {}", name, v->dump()));
    }
    return v->get<bool>();
  }

  // A finite number > 0 at obj[key] (obj is the root or a nested rope object, and `shown` the
  // field's name in messages), or nullopt when absent.
  std::optional<double> optional_positive_number(const json& obj, const char* key,
                                                 const std::string& shown) const {
    const json* v = field(obj, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) {
      fail(path,
           fmt::format("field '{}' must be a number, got {} {}", shown, v->type_name(), v->dump()));
    }
    const double x = v->get<double>();
    if (!(x > 0) || !std::isfinite(x)) {
      fail(path, fmt::format("field '{}' must be positive, got {}", shown, v->dump()));
    }
    return x;
  }
};

struct known_architecture {
  architecture arch;
  const char* class_name;
  const char* model_type;
};

constexpr known_architecture known_architectures[] = {
    {architecture::llama, "LlamaForCausalLM", "llama"},
    {architecture::qwen2, "Qwen2ForCausalLM", "qwen2"},
    {architecture::qwen3, "Qwen3ForCausalLM", "qwen3"},
    {architecture::nemotron_h, "NemotronHForCausalLM", "nemotron_h"},
};

void read_architecture(const config_file& cf, model_config& c) {
  const json* archs = field(cf.root, "architectures");
  if (archs != nullptr) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
      fail(cf.path, fmt::format("field 'architectures' must be a non-empty list of names, got {}",
                                archs->dump()));
    }
    const auto name = (*archs)[0].get<std::string>();
    for (const auto& k : known_architectures) {
      if (name == k.class_name) {
        c.arch = k.arch;
        c.architecture_name = name;
        return;
      }
    }
    fail(cf.path, fmt::format("unsupported architecture '{}' (supported: LlamaForCausalLM, "
                              "Qwen2ForCausalLM, Qwen3ForCausalLM, NemotronHForCausalLM)",
                              name));
  }
  const json* type = field(cf.root, "model_type");
  if (type == nullptr) fail(cf.path, "missing field 'architectures' (and no 'model_type')");
  if (!type->is_string()) {
    fail(cf.path, fmt::format("field 'model_type' must be a string, got {}", type->dump()));
  }
  const auto name = type->get<std::string>();
  for (const auto& k : known_architectures) {
    if (name == k.model_type) {
      c.arch = k.arch;
      // Nothing names the class; report the one this model_type means.
      c.architecture_name = k.class_name;
      return;
    }
  }
  fail(cf.path, fmt::format("unsupported model_type '{}' (supported: llama, qwen2, qwen3, "
                            "nemotron_h)",
                            name));
}

// Transformers v5 writes rope_parameters {rope_theta, rope_type, ...}; older configs write a
// top-level rope_theta and a rope_scaling object (or null) whose type is "type" or "rope_type".
void read_rope(const config_file& cf, model_config& c) {
  const json* params = field(cf.root, "rope_parameters");
  const char* where = "rope_parameters";
  if (params == nullptr) {
    params = field(cf.root, "rope_scaling");
    where = "rope_scaling";
  }
  if (params != nullptr && !params->is_object()) {
    fail(cf.path, fmt::format("field '{}' must be an object, got {}", where, params->dump()));
  }

  rope_config& r = c.rope;
  const std::string prefix = params != nullptr ? std::string(where) + "." : "";
  std::optional<double> theta;
  if (params != nullptr) {
    theta = cf.optional_positive_number(*params, "rope_theta", prefix + "rope_theta");
  }
  if (!theta) theta = cf.optional_positive_number(cf.root, "rope_theta", "rope_theta");
  r.theta = theta.value_or(10000.0);

  if (params == nullptr) return;
  std::string type = "default";
  for (const char* key : {"rope_type", "type"}) {
    const json* t = field(*params, key);
    if (t == nullptr) continue;
    if (!t->is_string()) {
      fail(cf.path, fmt::format("field '{}{}' must be a string, got {}", prefix, key, t->dump()));
    }
    type = t->get<std::string>();
    break;
  }

  auto number = [&](const char* key) {
    auto x = cf.optional_positive_number(*params, key, prefix + key);
    if (!x) {
      fail(cf.path,
           fmt::format("missing field '{}{}' (needed by rope type '{}')", prefix, key, type));
    }
    return *x;
  };

  if (type == "default") {
    r.type = rope_config::kind::none_default;
  } else if (type == "linear") {
    r.type = rope_config::kind::linear;
    r.factor = number("factor");
  } else if (type == "llama3") {
    r.type = rope_config::kind::llama3;
    r.factor = number("factor");
    r.low_freq_factor = number("low_freq_factor");
    r.high_freq_factor = number("high_freq_factor");
    const json* ctx = field(*params, "original_max_position_embeddings");
    if (ctx == nullptr) {
      fail(cf.path, fmt::format("missing field '{}original_max_position_embeddings' (needed by "
                                "rope type 'llama3')",
                                prefix));
    }
    r.original_max_position = cf.integer(*ctx, prefix + "original_max_position_embeddings", 1,
                                         std::numeric_limits<std::int64_t>::max());
    // The smoothing divides by high - low; equal or inverted bands are not a llama3 rope.
    if (!(r.high_freq_factor > r.low_freq_factor)) {
      fail(cf.path, fmt::format("{}high_freq_factor ({}) must be larger than low_freq_factor ({})",
                                prefix, r.high_freq_factor, r.low_freq_factor));
    }
  } else {
    fail(cf.path, fmt::format("unsupported rope type '{}' in {} (supported: default, linear, "
                              "llama3)",
                              type, where));
  }
}

std::vector<std::uint32_t> read_token_ids(const config_file& cf, const json& v, const char* name) {
  std::vector<std::uint32_t> ids;
  auto add = [&](const json& x) {
    const auto id = static_cast<std::uint32_t>(
        cf.integer(x, name, 0, std::numeric_limits<std::uint32_t>::max()));
    for (auto seen : ids) {
      if (seen == id) return;
    }
    ids.push_back(id);
  };
  if (v.is_array()) {
    for (const auto& x : v) add(x);
  } else {
    add(v);
  }
  return ids;
}

void read_special_tokens(const config_file& config, const std::string& dir, model_config& c) {
  std::optional<config_file> generation;
  const std::string gen_path = dir + "/generation_config.json";
  if (auto text = dir.empty() ? std::nullopt : read_file_if_exists(gen_path)) {
    generation = config_file{gen_path, parse_json_object(gen_path, *text)};
  }
  // generation_config.json is what HF's generate() obeys, so it wins where it says anything.
  auto pick = [&](const char* name) -> std::pair<const config_file*, const json*> {
    if (generation) {
      if (const json* v = field(generation->root, name)) return {&*generation, v};
    }
    return {&config, field(config.root, name)};
  };

  if (auto [file, v] = pick("eos_token_id"); v != nullptr) {
    c.eos_token_ids = read_token_ids(*file, *v, "eos_token_id");
  }
  if (auto [file, v] = pick("bos_token_id"); v != nullptr) {
    c.bos_token_id =
        file->integer(*v, "bos_token_id", 0, std::numeric_limits<std::uint32_t>::max());
  }
}

// A number, or Python's float('inf') / float('nan') as transformers writes them in JSON:
// {"__float__": "Infinity"} (real NemotronH configs do, in time_step_limit).
double json_number(const config_file& cf, const json& v, const std::string& name) {
  if (v.is_number()) return v.get<double>();
  const json* f = v.is_object() && v.size() == 1 ? field(v, "__float__") : nullptr;
  if (f != nullptr && f->is_string()) {
    const auto text = f->get<std::string>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  fail(cf.path, fmt::format("field '{}' must be a number, got {}", name, v.dump()));
}

std::string required_string(const config_file& cf, const char* name, const char* fallback) {
  const json* v = field(cf.root, name);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    fail(cf.path, fmt::format("field '{}' must be a string, got {}", name, v->dump()));
  }
  return v->get<std::string>();
}

// A NemotronH layer's type as layers_block_type names it (transformers 5 and the hub's older
// names) or as hybrid_override_pattern writes it (one character a layer).
layer_kind hybrid_layer(const config_file& cf, const std::string& type, const std::string& where) {
  if (type == "mamba" || type == "linear_attention" || type == "M") return layer_kind::mamba;
  if (type == "attention" || type == "full_attention" || type == "*") return layer_kind::attention;
  if (type == "mlp" || type == "-") return layer_kind::mlp;
  if (type == "moe" || type == "E") {
    fail(cf.path, fmt::format("{} is '{}': mixture-of-experts layers are not supported yet (a "
                              "NemotronH model of Mamba-2, attention and MLP layers is)",
                              where, type));
  }
  fail(cf.path, fmt::format("{} is '{}', not a known layer type (mamba or linear_attention, "
                            "attention or full_attention, mlp)",
                            where, type));
}

// NemotronH's layer list: layers_block_type, or the older hybrid_override_pattern.
void read_hybrid_layers(const config_file& cf, model_config& c) {
  if (const json* list = field(cf.root, "layers_block_type")) {
    if (!list->is_array() || list->empty()) {
      fail(cf.path, fmt::format("field 'layers_block_type' must be a non-empty list, got {}",
                                list->dump()));
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string where = fmt::format("layers_block_type[{}]", i);
      if (!(*list)[i].is_string()) {
        fail(cf.path, fmt::format("{} must be a string, got {}", where, (*list)[i].dump()));
      }
      c.layers.push_back(hybrid_layer(cf, (*list)[i].get<std::string>(), where));
    }
  } else if (const json* pattern = field(cf.root, "hybrid_override_pattern")) {
    if (!pattern->is_string() || pattern->get<std::string>().empty()) {
      fail(cf.path, fmt::format("field 'hybrid_override_pattern' must be a non-empty string, got "
                                "{}",
                                pattern->dump()));
    }
    const auto text = pattern->get<std::string>();
    for (std::size_t i = 0; i < text.size(); ++i) {
      c.layers.push_back(hybrid_layer(cf, std::string(1, text[i]),
                                      fmt::format("hybrid_override_pattern[{}]", i)));
    }
  } else {
    fail(cf.path, "missing field 'layers_block_type' (or 'hybrid_override_pattern')");
  }
  const auto n = static_cast<std::int32_t>(c.layers.size());
  if (auto layers = cf.optional_size("num_hidden_layers"); layers && *layers != n) {
    fail(cf.path, fmt::format("num_hidden_layers is {}, but the layer types list {} layers",
                              *layers, n));
  }
  c.num_layers = n;
}

// The Mamba-2 mixers' shapes and time-step range.
void read_mamba(const config_file& cf, model_config& c) {
  mamba_config& m = c.mamba;
  m.num_heads = cf.required_size("mamba_num_heads");
  m.head_dim = cf.required_size("mamba_head_dim");
  m.state_size = cf.required_size("ssm_state_size");
  m.n_groups = cf.optional_size("n_groups").value_or(1);
  m.conv_kernel = cf.required_size("conv_kernel");
  m.chunk_size = cf.required_size("chunk_size");
  if (m.num_heads % m.n_groups != 0) {
    fail(cf.path, fmt::format("mamba_num_heads ({}) is not divisible by n_groups ({})",
                              m.num_heads, m.n_groups));
  }
  m.conv_bias = cf.optional_bool("use_conv_bias", true);
  m.proj_bias = cf.optional_bool("use_bias", false);
  m.time_step_min =
      cf.optional_positive_number(cf.root, "time_step_min", "time_step_min").value_or(0.001);
  m.time_step_limit_low = 0.0;
  m.time_step_limit_high = std::numeric_limits<double>::infinity();
  if (const json* limit = field(cf.root, "time_step_limit")) {
    if (!limit->is_array() || limit->size() != 2) {
      fail(cf.path, fmt::format("field 'time_step_limit' must be a list of two numbers, got {}",
                                limit->dump()));
    }
    m.time_step_limit_low = json_number(cf, (*limit)[0], "time_step_limit[0]");
    m.time_step_limit_high = json_number(cf, (*limit)[1], "time_step_limit[1]");
    if (!(m.time_step_limit_low <= m.time_step_limit_high)) {
      fail(cf.path, fmt::format("time_step_limit {} is not a range", limit->dump()));
    }
  }
}

// NemotronH: the layer list, the Mamba-2 mixers' shapes, and what it refuses.
void read_hybrid(const config_file& cf, model_config& c) {
  read_hybrid_layers(cf, c);
  read_mamba(cf, c);
  const std::string mamba_act = required_string(cf, "mamba_hidden_act", "silu");
  if (mamba_act != "silu" && mamba_act != "swish") {
    fail(cf.path, fmt::format("mamba_hidden_act '{}' is not supported (silu is)", mamba_act));
  }
  const std::string mlp_act = required_string(cf, "mlp_hidden_act", "relu2");
  if (mlp_act != "relu2") {
    fail(cf.path, fmt::format("mlp_hidden_act '{}' is not supported (relu2 is)", mlp_act));
  }
  const std::string state_dtype = required_string(cf, "mamba_ssm_cache_dtype", "float32");
  if (state_dtype != "float32") {
    fail(cf.path, fmt::format("mamba_ssm_cache_dtype '{}' is not supported (the SSM state is kept "
                              "in float32)",
                              state_dtype));
  }
  if (cf.optional_bool("residual_in_fp32", false)) {
    fail(cf.path, "residual_in_fp32 true is not supported yet");
  }
  c.mlp_bias = cf.optional_bool("mlp_bias", false);
  for (const char* key : {"use_bias", "mlp_bias", "attention_bias"}) {
    if (cf.optional_bool(key, false)) {
      fail(cf.path, fmt::format("{} true is not supported yet for NemotronH", key));
    }
  }
  if (auto eps = cf.optional_positive_number(cf.root, "layer_norm_epsilon", "layer_norm_epsilon")) {
    c.rms_norm_eps = *eps;
  }
  c.rotary = false;
}

}  // namespace

const char* layer_kind_name(layer_kind k) {
  switch (k) {
    case layer_kind::mamba:
      return "mamba";
    case layer_kind::attention:
      return "attention";
    case layer_kind::mlp:
      return "mlp";
  }
  return "?";
}

std::int32_t model_config::kv_layers() const {
  if (!hybrid()) return num_layers;
  return static_cast<std::int32_t>(std::count(layers.begin(), layers.end(), layer_kind::attention));
}

std::int32_t model_config::mamba_layers() const {
  return static_cast<std::int32_t>(std::count(layers.begin(), layers.end(), layer_kind::mamba));
}

const char* architecture_name(architecture a) {
  switch (a) {
    case architecture::llama:
      return "llama";
    case architecture::qwen2:
      return "qwen2";
    case architecture::qwen3:
      return "qwen3";
    case architecture::nemotron_h:
      return "nemotron_h";
  }
  return "?";
}

model_config load_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  auto text = read_file_if_exists(path);
  if (!text) fail(path, "missing file (No such file or directory)");
  return parse_model_config(path, *text, dir);
}

model_config parse_model_config(const std::string& path, const std::string& text,
                                const std::string& dir) {
  const config_file cf{path, parse_json_object(path, text)};

  model_config c;
  read_architecture(cf, c);
  c.vocab_size = cf.required_size("vocab_size");
  c.hidden_size = cf.required_size("hidden_size");
  c.intermediate_size = cf.required_size("intermediate_size");
  if (c.arch == architecture::nemotron_h) {
    read_hybrid(cf, c);
  } else {
    c.num_layers = cf.required_size("num_hidden_layers");
  }
  c.num_heads = cf.required_size("num_attention_heads");
  c.num_kv_heads = cf.optional_size("num_key_value_heads").value_or(c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0) {
    fail(path, fmt::format("num_attention_heads ({}) is not divisible by num_key_value_heads ({})",
                           c.num_heads, c.num_kv_heads));
  }
  if (auto head_dim = cf.optional_size("head_dim")) {
    c.head_dim = *head_dim;
  } else {
    if (c.hidden_size % c.num_heads != 0) {
      fail(path, fmt::format("hidden_size ({}) is not divisible by num_attention_heads ({}) and "
                             "there is no head_dim",
                             c.hidden_size, c.num_heads));
    }
    c.head_dim = c.hidden_size / c.num_heads;
  }
  // Rotary embeddings rotate pairs of dimensions.
  if (c.rotary && c.head_dim % 2 != 0) {
    fail(path, fmt::format("head_dim ({}) must be even", c.head_dim));
  }
  if (auto eps = cf.optional_positive_number(cf.root, "rms_norm_eps", "rms_norm_eps")) {
    c.rms_norm_eps = *eps;
  }
  const json* max_pos = field(cf.root, "max_position_embeddings");
  if (max_pos == nullptr) fail(path, "missing field 'max_position_embeddings'");
  c.max_position_embeddings =
      cf.integer(*max_pos, "max_position_embeddings", 1, std::numeric_limits<std::int64_t>::max());
  c.tie_word_embeddings = cf.optional_bool("tie_word_embeddings", false);
  c.qkv_bias = c.arch == architecture::qwen2 || cf.optional_bool("attention_bias", false);
  c.qk_norm = c.arch == architecture::qwen3;

  for (const char* key : {"dtype", "torch_dtype"}) {
    const json* v = field(cf.root, key);
    if (v == nullptr) continue;
    if (!v->is_string()) {
      fail(path, fmt::format("field '{}' must be a string, got {}", key, v->dump()));
    }
    c.torch_dtype = v->get<std::string>();
    // transformers 5 loads a folder in config.json's "dtype" by default and holds the RoPE
    // inv_freq buffer in that dtype; the older "torch_dtype" key is not the load default.
    if (std::string(key) == "dtype" && (c.torch_dtype == "bfloat16" || c.torch_dtype == "float16")) {
      c.rope.inv_freq_dtype = c.torch_dtype;
    }
    break;
  }

  read_rope(cf, c);
  read_special_tokens(cf, dir, c);
  return c;
}

// Mirrors transformers' _compute_default_rope_parameters and _compute_llama3_parameters op by op
// in float32, so that positions far into the context rotate by the same angles as the reference.
// Torch evaluates `scalar / tensor` as tensor.reciprocal() * scalar, and casts Python scalars to
// float before an op on a float tensor; both are copied here.
std::vector<float> rope_inv_freq(const model_config& c) {
  const int half = c.head_dim / 2;
  std::vector<float> inv_freq(static_cast<std::size_t>(half > 0 ? half : 0));
  for (int i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(c.head_dim);
    const float base_pow = static_cast<float>(std::pow(c.rope.theta, double{exponent}));
    inv_freq[static_cast<std::size_t>(i)] = 1.0f / base_pow;
  }

  const rope_config& r = c.rope;
  const auto factor = static_cast<float>(r.factor);
  switch (r.type) {
    case rope_config::kind::none_default:
      break;
    case rope_config::kind::linear:
      for (float& f : inv_freq) f = f / factor;
      break;
    case rope_config::kind::llama3: {
      const auto old_ctx = static_cast<double>(r.original_max_position);
      // Python doubles, cast to float where they meet the tensor.
      const auto low_freq_wavelen = static_cast<float>(old_ctx / r.low_freq_factor);
      const auto high_freq_wavelen = static_cast<float>(old_ctx / r.high_freq_factor);
      const auto two_pi = static_cast<float>(2.0 * 3.141592653589793);  // Python's 2 * math.pi
      const auto low = static_cast<float>(r.low_freq_factor);
      const auto band = static_cast<float>(r.high_freq_factor - r.low_freq_factor);
      const auto old_ctx_f = static_cast<float>(old_ctx);
      for (float& f : inv_freq) {
        const float wavelen = (1.0f / f) * two_pi;
        const float llama = wavelen > low_freq_wavelen ? f / factor : f;
        const float smooth = ((1.0f / wavelen) * old_ctx_f - low) / band;
        const float smoothed = (1.0f - smooth) * llama / factor + smooth * llama;
        const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
        f = medium ? smoothed : llama;
      }
      break;
    }
  }
  // The reference holds inv_freq as a buffer of the load dtype and widens it to f32 for the
  // angles; rounding here gives the same angles, which matters far into the context.
  if (r.inv_freq_dtype == "bfloat16") {
    for (float& f : inv_freq) f = gpu::bf16_to_f32(gpu::f32_to_bf16(f));
  } else if (r.inv_freq_dtype == "float16") {
    for (float& f : inv_freq) f = gpu::f16_to_f32(gpu::f32_to_f16(f));
  }
  return inv_freq;
}

}  // namespace courier::model
