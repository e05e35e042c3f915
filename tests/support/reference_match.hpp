#pragma once
// Comparing a batched run's tokens with what the request gives alone on the sim backend (f32),
// on whichever backend the integration tests run (COURIER_TEST_BACKEND).
//
// On sim the two must be equal token for token: its ops do not depend on the batch. On a bf16
// backend (cuda) they agree up to numerics, as tests/data/FIXTURES.md defines it: greedy tokens
// equal up to the first step whose f32 margin (best minus second-best logit) is below 0.25, and
// anything after a divergence (the contexts differ from there). A sampled row's draw can cross a
// CDF boundary at any step, so on bf16 only its length is checked.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/model/generate_one.hpp"

namespace courier::test {

inline constexpr float bf16_margin = 0.25f;

inline bool exact_backend() {
  const char* b = std::getenv("COURIER_TEST_BACKEND");
  return b == nullptr || *b == '\0' || std::string(b) == "sim";
}

struct reference_output {
  std::vector<model::token_id> tokens;
  std::vector<float> margins;  // per token, greedy rows only: logprob of best minus second best
  bool greedy = false;
};

// Runs `g` alone on `m` (a sim model), recording each greedy step's margin. A penalised row
// counts as sampled here: its margins would be the raw logits', not the penalised ones' its
// choice depends on.
inline reference_output reference_alone(model::llama_model& m, model::kv_cache& cache,
                                        model::generate_request g) {
  reference_output r;
  r.greedy = g.sampling.temperature <= 0.0f && g.sampling.repetition_penalty == 1.0f &&
             g.sampling.presence_penalty == 0.0f && g.sampling.frequency_penalty == 0.0f;
  if (r.greedy) g.sampling.num_logprobs = 2;
  const model::generate_result res = model::generate_one(m, cache, g);
  r.tokens = res.tokens;
  if (r.greedy) {
    for (const gpu::sample_result& s : res.samples) {
      r.margins.push_back(s.top_logprobs.size() == 2 ? s.top_logprobs[0] - s.top_logprobs[1]
                                                     : 0.0f);
    }
  }
  return r;
}

// Empty when `got` matches `want` as the header describes; else what differs. With
// allow_prefix, `got` may stop early (a cancelled request).
inline std::string mismatch(const std::vector<model::token_id>& got, const reference_output& want,
                            bool allow_prefix = false) {
  std::ostringstream why;
  if (got.size() > want.tokens.size() || (!allow_prefix && got.size() != want.tokens.size())) {
    why << got.size() << " tokens, expected " << want.tokens.size();
    return why.str();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want.tokens[i]) continue;
    if (!exact_backend() && (!want.greedy || want.margins.at(i) < bf16_margin)) return {};
    why << "token " << i << " is " << got[i] << ", expected " << want.tokens[i];
    if (want.greedy) why << " (reference margin " << want.margins.at(i) << ")";
    return why.str();
  }
  return {};
}

}  // namespace courier::test
