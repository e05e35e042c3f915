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
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/embedding_request.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::admission {

// Parses the body on the calling thread (a text lane), then spawns the actor that submits the
// inputs and answers once every one has its vector (or with the first error; a client that goes
// away cancels them). A bad body is answered at once.
void spawn_embeddings(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                      const std::string& body, std::shared_ptr<http::response_writer> out,
                      std::string tenant, std::int64_t arrival_ns);

}  // namespace courier::admission
