#include "gpu/model/model_shapes.hpp"

#include <utility>

namespace courier::model {

namespace {

// The architecture fields of each model's config.json on the Hugging Face hub, as published.
const std::pair<const char*, const char*> shapes[] = {
    {"llama3-8b", R"({
      "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": false,
      "bos_token_id": 128000, "eos_token_id": 128001, "hidden_size": 4096,
      "intermediate_size": 14336, "max_position_embeddings": 131072,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"},
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256})"},
    {"qwen3-8b", R"({
      "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": false,
      "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_size": 4096,
      "intermediate_size": 12288, "max_position_embeddings": 40960,
      "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
      "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 151936})"},
    {"qwen3-0.6b", R"({
      "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": false,
      "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_size": 1024,
      "intermediate_size": 3072, "max_position_embeddings": 40960,
      "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
      "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
      "tie_word_embeddings": true, "torch_dtype": "bfloat16", "vocab_size": 151936})"},
};

}  // namespace

std::vector<std::string> builtin_shape_names() {
  std::vector<std::string> out;
  for (const auto& [name, json] : shapes) out.emplace_back(name);
  return out;
}

std::optional<model_config> builtin_shape(const std::string& name) {
  for (const auto& [n, json] : shapes) {
    if (name == n) return parse_model_config("built-in shape " + name, json, "");
  }
  return std::nullopt;
}

}  // namespace courier::model
