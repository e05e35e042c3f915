#pragma once
// /v1/embeddings' pure parts (embeddings.hpp has the route): a body parsed and tokenized, and the
// answer written. No actors, no I/O.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/admission_context.hpp"

namespace courier::admission {

// OpenAI's own bound on the inputs of one request.
inline constexpr std::size_t max_embedding_inputs = 2048;

struct embedding_request {
  std::string model;
  std::string adapter;  // empty: the base model
  std::vector<std::vector<msg::token_id>> inputs;
  bool base64 = false;
};

// Parses and tokenizes a body. Throws api_error: 400 naming the field (an input past
// max_model_len: context_length_exceeded), 404 for a model it may not use.
embedding_request parse_embedding_request(const std::string& body, const admission_context& ctx,
                                          const std::string& tenant);

// The response: {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], ...}
// with `vectors` in input order, each scaled to unit length when `normalize`; `embedding` a list
// of numbers, or with base64 the base64 of their little-endian f32 bytes.
std::string embeddings_body(const std::string& model, std::vector<std::vector<float>> vectors,
                            bool normalize, bool base64, std::int64_t prompt_tokens);

}  // namespace courier::admission
