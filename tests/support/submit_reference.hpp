#pragma once
// What a submitted request gives alone, straight on the sim model (no scheduler, no batch): the
// reference the scheduler's integration tests compare a batched run with (reference_match.hpp).
#include <map>
#include <string>
#include <vector>

#include "gpu/model/generate_one.hpp"
#include "grammar/token_mask.hpp"
#include "messages/messages.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/reference_match.hpp"

namespace courier::test {

// The masks of a grammar as the reference computes them: a matcher fed the whole output again
// and a mask cache of its own (one per grammar, kept for the test binary's life), so nothing is
// shared with the engine's matcher kept across steps or its cache. (The cached masks themselves
// are held to brute force in tests/grammar and on the real vocabularies.) A triggered grammar
// is followed on the output's text: free up to each occurrence of the trigger, the grammar from
// just after it until it is complete, then free again (or EOS only, without repeats).
inline void reference_grammar_mask(const msg::output_grammar& og,
                                   const std::vector<model::token_id>& output,
                                   std::vector<std::uint32_t>& words) {
  const grammar::mask_cache& engines = *og.masks;
  // Keyed by what the cache holds alive, so a key is never reused for another grammar.
  static std::map<std::pair<const void*, const void*>, std::shared_ptr<grammar::mask_cache>> own;
  auto& cache = own[{engines.grammar_ptr().get(), engines.vocabulary_ptr().get()}];
  if (!cache) {
    cache = std::make_shared<grammar::mask_cache>(engines.grammar_ptr(), engines.vocabulary_ptr());
  }
  const auto& v = engines.vocabulary();
  std::string text;
  for (const model::token_id t : output) {
    const auto& eos = v.eos_ids();
    if (std::find(eos.begin(), eos.end(), t) == eos.end() && t < v.id_bound()) text += v.bytes(t);
  }
  auto m = std::make_unique<grammar::matcher>(engines.grammar_ptr());
  bool active = og.trigger.empty();
  std::size_t pos = 0;
  while (!active) {
    const std::size_t at = text.find(og.trigger, pos);
    if (at == std::string::npos) {  // free: every token of the model's vocabulary
      for (std::size_t w = 0; w < words.size(); ++w) words[w] = ~0u;
      return;
    }
    m = std::make_unique<grammar::matcher>(engines.grammar_ptr());
    active = true;
    for (pos = at + og.trigger.size(); pos < text.size(); ++pos) {
      if (!m->accept(text.substr(pos, 1))) throw std::logic_error("the reference's output left its grammar");
      if (m->is_terminated() && og.trigger_repeats) {
        active = false;
        ++pos;
        break;
      }
    }
  }
  if (og.trigger.empty() && !m->accept(text)) {
    throw std::logic_error("the reference's output left its grammar");
  }
  grammar::token_bitmask mask;
  grammar::fill_token_mask(*m, *cache, mask);
  for (std::uint32_t id = 0; id < v.id_bound() && id / 32 < words.size(); ++id) {
    if (grammar::mask_has(mask, id)) words[id / 32] |= 1u << (id % 32);
  }
}

// `s` as generate_one runs it: prompt, max_tokens, ignore_eos, stop ids, min_tokens,
// temperature, top_p, top_k, seed, the penalties (whose lists generate_one counts on the host
// each step), the logit bias and the grammar (the options the integration tests vary).
inline model::generate_request generate_request_of(const msg::submit& s) {
  model::generate_request g;
  g.prompt = s.prompt;
  g.max_tokens = s.max_tokens;
  g.ignore_eos = s.ignore_eos;
  g.stop_token_ids = s.stop_token_ids;
  g.min_tokens = s.sampling.min_tokens;
  g.sampling.temperature = s.sampling.temperature;
  g.sampling.top_p = s.sampling.top_p;
  g.sampling.top_k = s.sampling.top_k;
  g.sampling.seed = s.sampling.seed;
  g.sampling.repetition_penalty = s.sampling.repetition_penalty;
  g.sampling.presence_penalty = s.sampling.presence_penalty;
  g.sampling.frequency_penalty = s.sampling.frequency_penalty;
  for (std::size_t j = 0; j < s.sampling.logit_bias_tokens.size(); ++j) {
    g.bias_tokens.push_back({s.sampling.logit_bias_tokens[j], s.sampling.logit_bias_values[j]});
  }
  if (s.sampling.grammar) {
    g.mask = [og = s.sampling.grammar](const std::vector<model::token_id>& output,
                                       std::vector<std::uint32_t>& words) {
      reference_grammar_mask(og, output, words);
    };
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
