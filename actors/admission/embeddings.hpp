#pragma once
// OpenAI's `POST /v1/embeddings`, for a model whose folder declares sentence-transformers
// last-token pooling (Qwen3-Embedding, and others built the same way): each input's embedding
// is the hidden state at its last token after the model's final norm (what lm_head would
// project), scaled to unit length when the folder adds a Normalize module.
// The folder says so in sentence-transformers' files (sentence_pooling.hpp); where it does not,
// the route answers 404 with the reason (the file and the field).
//
// Request: `input` a string, a list of strings, token ids or lists of token ids (at most
// max_embedding_inputs; text tokenized as completions' prompts, with the tokenizer's special
// tokens); `encoding_format` float (default) or base64 (little-endian f32, as OpenAI's);
// `dimensions` only the model's own size (these models are not cut, Matryoshka-style);
// `model` the served model or an adapter the key may use. Each input is one sequence through the
// scheduler (a sampling row that returns its hidden state: msg::sampling_params::embed), all of
// a request's queued together or refused together.
#include <caf/all.hpp>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/http/server.hpp"

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

// Parses the body on the calling thread (a text lane), then spawns the actor that submits the
// inputs and answers once every one has its vector (or with the first error; a client that goes
// away cancels them). A bad body is answered at once.
void spawn_embeddings(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                      const std::string& body, std::shared_ptr<http::response_writer> out,
                      std::string tenant, std::int64_t arrival_ns);

}  // namespace courier::admission
