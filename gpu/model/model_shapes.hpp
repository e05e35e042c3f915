#pragma once
// Built-in model shapes: the config.json of well-known models, so benchmarks can build a
// model-shaped engine with random weights (bench-forward --shape NAME --random-weights) without
// the model's files.
#include <optional>
#include <string>
#include <vector>

#include "gpu/model/model_config.hpp"

namespace courier::model {

// The names builtin_shape knows: llama3-8b (Llama 3.1 8B), qwen3-8b, qwen3-0.6b.
std::vector<std::string> builtin_shape_names();

// The model_config of a built-in shape, parsed from its Hugging Face config.json text by the
// same code as a folder's; nullopt for an unknown name.
std::optional<model_config> builtin_shape(const std::string& name);

}  // namespace courier::model
