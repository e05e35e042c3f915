#pragma once
// Test helpers over tests/data: the fixture models and the transformers reference outputs.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/safetensors.hpp"

namespace courier::test {

inline std::string data_dir() { return COURIER_TEST_DATA; }
inline std::string model_dir(const std::string& name) { return data_dir() + "/models/" + name; }

// The reference tensors of one fixture model (reference/NAME.safetensors).
class reference {
 public:
  explicit reference(const std::string& name)
      : file_(model::safetensors_file::open(data_dir() + "/reference/" + name + ".safetensors")) {}

  bool has(const std::string& key) const { return file_.contains(key); }

  std::vector<float> f32(const std::string& key) const {
    const auto& t = file_.tensor(key);
    std::vector<float> v(static_cast<std::size_t>(t.numel()));
    if (t.type == gpu::dtype::f32) {
      std::memcpy(v.data(), t.data, v.size() * 4);
    } else {
      const auto* p = static_cast<const std::uint16_t*>(t.data);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = gpu::bf16_to_f32(p[i]);
    }
    return v;
  }

  std::vector<std::int32_t> i32(const std::string& key) const {
    const auto& t = file_.tensor(key);
    std::vector<std::int32_t> v(static_cast<std::size_t>(t.numel()));
    std::memcpy(v.data(), t.data, v.size() * 4);
    return v;
  }

  std::vector<model::token_id> ids(const std::string& key) const {
    std::vector<model::token_id> out;
    for (auto x : i32(key)) out.push_back(static_cast<model::token_id>(x));
    return out;
  }

  int num_prompts() const {
    int n = 0;
    while (has("p" + std::to_string(n) + ".ids")) ++n;
    return n;
  }
  int num_greedy() const {
    int n = 0;
    while (has("g" + std::to_string(n) + ".prompt")) ++n;
    return n;
  }

 private:
  model::safetensors_file file_;
};

// A model on a fresh sim device, kept together so the device outlives the model.
struct sim_model {
  std::unique_ptr<gpu::device> dev;
  std::unique_ptr<model::llama_model> model;

  explicit sim_model(const std::string& name, int threads = 2)
      : dev(gpu::make_sim_device(threads, 1024)),
        model(model::llama_model::load(model_dir(name), *dev)) {}
};

// Block table 0..n-1 (or from `first`).
inline std::vector<std::int32_t> iota_table(std::int32_t n, std::int32_t first = 0) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) t[i] = first + i;
  return t;
}

// Puts the rows of `fb` that have none in the model's per-sequence slots, as the engine's rows
// are (forward_batch.hpp): row r in slot r, its table written whole (table_keep 0), its
// penalty and bias slices (when it has them) written into the slot's lists first
// (penalty_init, bias_init); the model's slots grown to hold them.
inline void in_slots(model::llama_model& m, model::forward_batch& fb, std::int32_t block_size) {
  std::size_t widest = 1;
  for (std::size_t r = 0; r < fb.rows.size(); ++r) {
    model::forward_row& row = fb.rows[r];
    widest = std::max(widest, row.table().size());
    if (row.table_slot >= 0) continue;
    const auto slot = static_cast<std::int32_t>(r);
    row.table_slot = slot;
    row.table_keep = 0;
    if (row.sample && row.sampling.penalty_count > 0 && row.penalty_slot < 0) {
      row.penalty_slot = slot;
      row.penalty_init = true;
    }
    if (row.sample && row.sampling.bias_count > 0 && row.bias_slot < 0) {
      row.bias_slot = slot;
      row.bias_init = true;
    }
  }
  m.reserve_slots(static_cast<std::int32_t>(std::max<std::size_t>(fb.rows.size(), 1)),
                  static_cast<std::int64_t>(widest) * block_size, block_size);
}

// `prompt` in one pass on a fresh cache, as one row that `ask` sets what to return of.
template <class Ask>
model::row_output prefill_row(model::llama_model& m, const std::vector<model::token_id>& prompt,
                              Ask&& ask, std::int32_t block_size = 16) {
  const auto blocks = static_cast<std::int32_t>((prompt.size() + block_size - 1) / block_size);
  model::kv_cache cache(m.device(), m.shard_config(), blocks, block_size);
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = prompt;
  row.block_table = iota_table(blocks);
  if (m.config().hybrid()) row.state_slot = 0;
  ask(fb, row);
  fb.rows.push_back(row);
  in_slots(m, fb, block_size);
  return std::move(m.forward(fb, cache).rows[0]);
}

// Logits of every position of `prompt` in one pass on a fresh cache: [len, vocab].
inline std::vector<float> prefill_all_logits(model::llama_model& m,
                                             const std::vector<model::token_id>& prompt,
                                             std::int32_t block_size = 16) {
  return prefill_row(
             m, prompt,
             [](model::forward_batch& fb, model::forward_row& row) {
               fb.return_logits = true;
               row.logits = model::logits_mode::all;
             },
             block_size)
      .logits;
}

// The last position's hidden state after the final norm (return_hidden), nothing else.
inline model::row_output prefill_hidden(model::llama_model& m,
                                        const std::vector<model::token_id>& prompt) {
  return prefill_row(m, prompt,
                     [](model::forward_batch&, model::forward_row& row) { row.return_hidden = true; });
}

inline std::size_t argmax(const float* v, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// The best of v minus the second best (n >= 2).
inline float top_gap(const float* v, std::size_t n) {
  const std::size_t best = argmax(v, n);
  float second = best == 0 ? v[1] : v[0];
  for (std::size_t i = 0; i < n; ++i)
    if (i != best && v[i] > second) second = v[i];
  return v[best] - second;
}

}  // namespace courier::test
