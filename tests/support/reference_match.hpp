#pragma once
// Comparing a batched run's tokens with what the request gives alone on the sim backend (f32),
// on whichever backend the integration tests run (COURIER_TEST_BACKEND).
//
// On sim the two must be equal token for token: its ops do not depend on the batch. On a bf16
// backend (cuda) they agree up to numerics, as tests/data/FIXTURES.md defines it: greedy tokens
// equal up to the first step whose f32 margin (best minus second-best logit) is below 0.25, and
// anything after a divergence (the contexts differ from there). A sampled row's draw can cross a
// CDF boundary at any step, so on bf16 only its length is checked.
#include <algorithm>
#include <cstdlib>
#include <functional>
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

// How far two runs' logprobs of the same token may be apart: 0 on sim; on bf16, each logit is
// within bf16_margin of f32's (FIXTURES.md), and a logprob is a logit minus the log-sum-exp,
// which moves no more than the logits do: twice that.
inline double logprob_tolerance() { return exact_backend() ? 0.0 : 2.0 * bf16_margin; }

struct reference_output {
  std::vector<model::token_id> tokens;
  std::vector<float> margins;  // per token, greedy rows only: logprob of best minus second best
  bool greedy = false;
};

// The gap between the token a greedy row takes and the next one it could take, from a step's
// sample: top_logprobs are of the raw logits (sim_sampling.cpp), so the row's bias is added to
// them and the tokens its mask (`words`, when not null) refuses, or min_tokens bans (`banned`),
// are left out. Where the sample
// cannot tell (a positively biased token outside the list), 0: any divergence is allowed there.
// Where the list holds one allowed token, the gap to the list's last is a lower bound of it.
inline float greedy_margin(const gpu::sample_result& s, const std::vector<std::uint32_t>* words,
                           const std::vector<gpu::bias_token>& bias,
                           const std::vector<std::uint32_t>& banned = {}) {
  auto allowed = [&](std::int64_t id) {
    if (std::find(banned.begin(), banned.end(), static_cast<std::uint32_t>(id)) != banned.end()) {
      return false;
    }
    return !words || ((*words)[static_cast<std::size_t>(id / 32)] >> (id % 32)) & 1u;
  };
  std::vector<float> scores;
  for (std::size_t i = 0; i < s.top_ids.size(); ++i) {
    if (!allowed(s.top_ids[i])) continue;
    float v = s.top_logprobs[i];
    for (const gpu::bias_token& b : bias) v += b.token == s.top_ids[i] ? b.bias : 0.0f;
    scores.push_back(v);
  }
  for (const gpu::bias_token& b : bias) {
    const bool listed =
        std::find(s.top_ids.begin(), s.top_ids.end(), b.token) != s.top_ids.end();
    if (b.bias > 0.0f && !listed && allowed(b.token)) return 0.0f;
  }
  if (scores.empty()) return 0.0f;
  std::sort(scores.begin(), scores.end(), std::greater<float>());
  if (scores.size() >= 2) return scores[0] - scores[1];
  return s.top_logprobs.empty() ? 0.0f : scores[0] - s.top_logprobs.back();
}

// Runs `g` alone on `m` (a sim model), recording each greedy step's margin (greedy_margin, over
// gpu::max_logprobs of the raw logprobs and the step's mask). A penalised row counts as sampled
// here: its margins would be the raw logits', not the penalised ones' its choice depends on.
inline reference_output reference_alone(model::llama_model& m, model::kv_cache& cache,
                                        model::generate_request g) {
  reference_output r;
  r.greedy = g.sampling.temperature <= 0.0f && g.sampling.repetition_penalty == 1.0f &&
             g.sampling.presence_penalty == 0.0f && g.sampling.frequency_penalty == 0.0f;
  std::vector<std::vector<std::uint32_t>> masks;  // each step's, when the row has a mask
  if (r.greedy) {
    g.sampling.num_logprobs = gpu::max_logprobs;
    if (g.mask) {
      g.mask = [inner = g.mask, &masks](const std::vector<model::token_id>& output,
                                        std::vector<std::uint32_t>& words) {
        inner(output, words);
        masks.push_back(words);
      };
    }
  }
  const model::generate_result res = model::generate_one(m, cache, g);
  r.tokens = res.tokens;
  std::vector<std::uint32_t> ends = g.stop_token_ids;  // banned below min_tokens
  if (!g.ignore_eos) {
    for (const model::token_id t : m.config().eos_token_ids) ends.push_back(t);
  }
  if (r.greedy) {
    for (std::size_t i = 0; i < res.samples.size(); ++i) {
      const bool known = !g.mask || masks.size() == res.samples.size();
      const bool ban = static_cast<std::int64_t>(i) < g.min_tokens;
      r.margins.push_back(known ? greedy_margin(res.samples[i], g.mask ? &masks[i] : nullptr,
                                                g.bias_tokens,
                                                ban ? ends : std::vector<std::uint32_t>{})
                                : 0.0f);
    }
  }
  return r;
}

// Empty when `got` matches `want` as the header describes; else what differs. With
// allow_prefix, `got` may stop early (a cancelled request). The lengths are compared after the
// tokens: past an allowed divergence the two outputs are different texts, of any length.
inline std::string mismatch(const std::vector<model::token_id>& got, const reference_output& want,
                            bool allow_prefix = false) {
  std::ostringstream why;
  for (std::size_t i = 0; i < std::min(got.size(), want.tokens.size()); ++i) {
    if (got[i] == want.tokens[i]) continue;
    if (!exact_backend() && (!want.greedy || want.margins.at(i) < bf16_margin)) return {};
    why << "token " << i << " is " << got[i] << ", expected " << want.tokens[i];
    if (want.greedy) why << " (reference margin " << want.margins.at(i) << ")";
    return why.str();
  }
  if (got.size() > want.tokens.size() || (!allow_prefix && got.size() != want.tokens.size())) {
    why << got.size() << " tokens, expected " << want.tokens.size();
    return why.str();
  }
  return {};
}

}  // namespace courier::test
