#pragma once
// Random sentences of a grammar, drawn token by token from the masks as decoding would, for
// checking a grammar with an independent validator (tests/node validates JSON Schema samples
// with ajv) and for `courier grammar --samples`. Not used while serving.
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "grammar/token_mask.hpp"

namespace courier::grammar {

struct random_walk_options {
  std::size_t max_tokens = 400;  // give up (nullopt) past this
  // Once the grammar may end, stop with this probability at each step.
  double end_probability = 0.3;
};

// Each step draws uniformly among the allowed tokens, except that more and more often (the
// share grows with the tokens drawn) it prefers tokens that close something (a quote, a bracket,
// a brace), so that walks through nested structures end. nullopt when max_tokens pass first.
std::optional<std::string> random_sentence(mask_cache& cache, std::mt19937_64& rng,
                                           const random_walk_options& opts = {});

// A vocabulary of the 256 single bytes (ids 0..255) and end of sequence (id 256): every
// sentence of any grammar can be spelled in it.
std::shared_ptr<const token_vocabulary> byte_vocabulary();

}  // namespace courier::grammar
