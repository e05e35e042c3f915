#pragma once
// What a submitted request gives alone, straight on the sim model (no scheduler, no batch): the
// reference the scheduler's integration tests compare a batched run with (reference_match.hpp).
#include <map>
#include <string>
#include <vector>

#include "gpu/model/generate_one.hpp"
#include "messages/messages.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/reference_match.hpp"

namespace courier::test {

// `s` as generate_one runs it: prompt, max_tokens, ignore_eos, stop ids, temperature, top_p,
// top_k, seed and the logit bias (the options the integration tests vary).
inline model::generate_request generate_request_of(const msg::submit& s) {
  model::generate_request g;
  g.prompt = s.prompt;
  g.max_tokens = s.max_tokens;
  g.ignore_eos = s.ignore_eos;
  g.stop_token_ids = s.stop_token_ids;
  g.sampling.temperature = s.sampling.temperature;
  g.sampling.top_p = s.sampling.top_p;
  g.sampling.top_k = s.sampling.top_k;
  g.sampling.seed = s.sampling.seed;
  for (std::size_t j = 0; j < s.sampling.logit_bias_tokens.size(); ++j) {
    g.bias_tokens.push_back({s.sampling.logit_bias_tokens[j], s.sampling.logit_bias_values[j]});
  }
  return g;
}

// Runs `s` alone on a fresh cache of 64 blocks of 16 tokens.
inline reference_output reference_for(sim_model& sm, const msg::submit& s) {
  model::kv_cache cache(*sm.dev, sm.model->config(), 64, 16);
  return reference_alone(*sm.model, cache, generate_request_of(s));
}

// Each of `rs` alone on one sim model of `model_name`, by request id.
inline std::map<msg::request_id, reference_output> references_for(
    const std::string& model_name, const std::vector<msg::submit>& rs) {
  sim_model sm(model_name);
  std::map<msg::request_id, reference_output> out;
  for (const auto& s : rs) out[s.id] = reference_for(sm, s);
  return out;
}

}  // namespace courier::test
