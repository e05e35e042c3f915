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

enum class architecture { llama, qwen2, qwen3 };
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
  std::string torch_dtype;              // "bfloat16", ... ("dtype" or "torch_dtype"); may be empty
  std::vector<std::uint32_t> eos_token_ids;  // generation_config.json, else config.json
  std::int64_t bos_token_id = -1;
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
