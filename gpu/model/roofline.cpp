#include "gpu/model/roofline.hpp"

namespace courier::model {

namespace {

// Parameters of the linear layers of one decoder layer (biases included).
double layer_linear_params(const model_config& c) {
  const double H = c.hidden_size, I = c.intermediate_size;
  const double NQ = static_cast<double>(c.num_heads) * c.head_dim;
  const double NK = static_cast<double>(c.num_kv_heads) * c.head_dim;
  const double bias = c.qkv_bias ? NQ + 2 * NK : 0.0;
  return H * NQ + 2 * H * NK + NQ * H + 3 * H * I + bias;
}

double layer_norm_params(const model_config& c) {
  return 2.0 * c.hidden_size + (c.qk_norm ? 2.0 * c.head_dim : 0.0);
}

}  // namespace

std::int64_t parameter_count(const model_config& c) {
  const double embed = static_cast<double>(c.vocab_size) * c.hidden_size;
  const double layers = c.num_layers * (layer_linear_params(c) + layer_norm_params(c));
  const double head = c.tie_word_embeddings ? 0.0 : embed;
  return static_cast<std::int64_t>(embed + head + layers + c.hidden_size);
}

double decode_step_bytes(const model_config& c, std::size_t weight_dtype_bytes,
                         std::size_t kv_dtype_bytes, std::int64_t batch, std::int64_t context) {
  const double embed = static_cast<double>(c.vocab_size) * c.hidden_size;
  const double read_params =
      static_cast<double>(parameter_count(c)) - (c.tie_word_embeddings ? 0.0 : embed);
  const double kv_per_token =
      2.0 * c.num_layers * c.num_kv_heads * c.head_dim * static_cast<double>(kv_dtype_bytes);
  return read_params * static_cast<double>(weight_dtype_bytes) +
         static_cast<double>(batch) * static_cast<double>(context) * kv_per_token;
}

double prefill_flops(const model_config& c, std::int64_t seqs, std::int64_t tokens) {
  const double s = static_cast<double>(seqs), t = static_cast<double>(tokens);
  const double linear = 2.0 * s * t * c.num_layers * layer_linear_params(c);
  const double lm_head = 2.0 * s * static_cast<double>(c.vocab_size) * c.hidden_size;
  // Token i attends to i + 1 keys: sum over a sequence = t (t + 1) / 2.
  const double pairs = s * t * (t + 1) / 2;
  const double attention =
      4.0 * c.num_layers * static_cast<double>(c.num_heads) * c.head_dim * pairs;
  return linear + lm_head + attention;
}

}  // namespace courier::model
