#pragma once
// The architecture of a Hugging Face model folder, from config.json and generation_config.json.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace courier::model {

// A model folder that cannot be served. what() is one line naming the file and the problem.
class model_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class architecture { llama, qwen2, qwen3, nemotron_h };
const char* architecture_name(architecture a);

struct rope_config {
  enum class kind { none_default, linear, llama3 };
  kind type = kind::none_default;
  double theta = 10000.0;
  double factor = 1.0;                  // linear, llama3
  double low_freq_factor = 1.0;         // llama3
  double high_freq_factor = 4.0;        // llama3
  std::int64_t original_max_position = 8192;  // llama3
  // The dtype transformers holds the inv_freq buffer in when it loads this folder by default
  // (config.json "dtype": bfloat16/float16); "float32" otherwise. See rope_inv_freq.
  std::string inv_freq_dtype = "float32";
};

// A hybrid model's layer (NemotronH's "block"): RMSNorm, one mixer, the residual added.
enum class layer_kind : std::uint8_t {
  mamba,      // a Mamba-2 mixer ("mamba", "linear_attention"; pattern 'M')
  attention,  // attention without rotary embeddings ("attention", "full_attention"; '*')
  mlp,        // up, squared ReLU, down ("mlp"; '-')
};
const char* layer_kind_name(layer_kind k);

// A Mamba-2 mixer's shapes (NemotronH): in_proj [gate z | x B C | dt], a depthwise causal conv1d
// over x B C, the selective scan, a gated RMSNorm per group, out_proj.
struct mamba_config {
  std::int32_t num_heads = 0;   // mamba_num_heads
  std::int32_t head_dim = 0;    // mamba_head_dim
  std::int32_t state_size = 0;  // ssm_state_size
  std::int32_t n_groups = 0;    // groups of heads sharing B and C; divides num_heads
  std::int32_t conv_kernel = 0;
  std::int32_t chunk_size = 0;  // the SSD scan's chunk (the CUDA scan's tiling)
  double time_step_min = 0.0;   // dt = max(softplus(dt + dt_bias), time_step_min), as
                                // transformers' torch path clamps it
  double time_step_limit_low = 0.0;    // time_step_limit (the fused kernels' clamp), kept for
  double time_step_limit_high = 0.0;   // reporting; +inf when the config says Infinity
  bool conv_bias = true;        // use_conv_bias
  bool proj_bias = false;       // use_bias: in_proj and out_proj
  std::int32_t intermediate() const { return num_heads * head_dim; }
  std::int32_t conv_dim() const { return intermediate() + 2 * n_groups * state_size; }
  std::int32_t in_proj_dim() const { return intermediate() + conv_dim() + num_heads; }
};

// Invariants after load: num_heads % num_kv_heads == 0; all sizes > 0.
struct model_config {
  architecture arch = architecture::llama;
  std::string architecture_name;        // as written in config.json, e.g. "Qwen3ForCausalLM"
  std::int32_t vocab_size = 0;
  std::int32_t hidden_size = 0;
  std::int32_t intermediate_size = 0;
  std::int32_t num_layers = 0;
  std::int32_t num_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;            // config head_dim, else hidden_size / num_heads
  double rms_norm_eps = 1e-6;
  rope_config rope;
  std::int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;                // qwen2: always; llama/qwen3: attention_bias
  bool qk_norm = false;                 // qwen3
  bool rotary = true;                   // false: attention without positions (nemotron_h)
  std::string torch_dtype;              // "bfloat16", ... ("dtype" or "torch_dtype"); may be empty
  std::vector<std::uint32_t> eos_token_ids;  // generation_config.json, else config.json
  std::int64_t bos_token_id = -1;
  // Hybrid models (nemotron_h) only: their layers in order (num_layers of them), the Mamba-2
  // mixers' shapes, whether the MLP and attention projections have biases. Empty for the Llama
  // family, whose layers are each attention then a gated SiLU MLP.
  std::vector<layer_kind> layers;
  mamba_config mamba;
  bool mlp_bias = false;
  bool hybrid() const { return !layers.empty(); }
  // Layers with a KV cache: every layer, or a hybrid's attention layers.
  std::int32_t kv_layers() const;
  // A hybrid's Mamba-2 layers (each with a conv and an SSM state per sequence).
  std::int32_t mamba_layers() const;
};

// Reads DIR/config.json and DIR/generation_config.json (optional). Throws model_error.
model_config load_model_config(const std::string& dir);
// The same from config.json's text; `path` names it in errors, and DIR/generation_config.json is
// read when dir is not empty.
model_config parse_model_config(const std::string& path, const std::string& text,
                                const std::string& dir);

// inv_freq[i] for i in [0, head_dim / 2), as HF computes it in f32, with rope scaling applied.
std::vector<float> rope_inv_freq(const model_config& c);

}  // namespace courier::model
