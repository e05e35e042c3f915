#pragma once
// A model's outputs against transformers' (tests/data/reference, f32 mode) under the rules of
// tests/data/FIXTURES.md, for whatever runs the model: one sim device, or tensor-parallel ranks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gpu/dtype.hpp"
#include "gpu/model/generate_one.hpp"
#include "gpu/tensor.hpp"
#include "tests/support/fixtures.hpp"

namespace courier::test {

// Every prompt of fixture `name`: prompt_logits(ids) gives [len, vocab] logits of every
// position. The last position's logits within 2e-3 (absolute, or relative where |logit| > 1),
// and the top-1 token at every position whose reference top-1/top-2 gap exceeds 1e-3.
inline void check_prompt_logits(
    const std::string& name, std::size_t vocab,
    const std::function<std::vector<float>(const std::vector<model::token_id>&)>& prompt_logits) {
  reference ref(name);
  REQUIRE(ref.num_prompts() > 0);
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto prompt = ref.ids(key + ".ids");
    const auto logits = prompt_logits(prompt);
    REQUIRE(logits.size() == prompt.size() * vocab);
    INFO(name << " prompt " << p << " (" << prompt.size() << " tokens)");
    const auto want = ref.f32(key + ".f32.last_logits");
    REQUIRE(want.size() == vocab);
    const float* last = logits.data() + (prompt.size() - 1) * vocab;
    double worst = 0;
    for (std::size_t i = 0; i < vocab; ++i) {
      const double err = std::abs(static_cast<double>(last[i]) - want[i]) /
                         std::max(1.0, std::abs(static_cast<double>(want[i])));
      worst = std::max(worst, err);
    }
    CHECK(worst <= 2e-3);
    const auto top_ids = ref.i32(key + ".f32.top5_ids");
    const auto top_logits = ref.f32(key + ".f32.top5_logits");
    int compared = 0;
    for (std::size_t pos = 0; pos < prompt.size(); ++pos) {
      if (top_logits[pos * 5] - top_logits[pos * 5 + 1] <= 1e-3f) continue;
      INFO("position " << pos);
      CHECK(argmax(logits.data() + pos * vocab, vocab) ==
            static_cast<std::size_t>(top_ids[pos * 5]));
      ++compared;
    }
    CHECK(compared > 0);
  }
}

// A hidden state projected on the host through `head` ([vocab, hidden], a model folder's lm_head
// or tied embedding) against the logits `want`: the largest error, absolute or (`relative`, the
// fixtures' rule for f32 compute, whose bar is 2e-3) relative where |logit| > 1; bf16 compute's
// bar is 0.25 absolute.
inline double projected_logits_error(const gpu::host_tensor& head, const std::vector<float>& hidden,
                                     const std::vector<float>& want, bool relative = true) {
  const std::size_t V = static_cast<std::size_t>(head.shape.at(0)), H = hidden.size();
  REQUIRE(static_cast<std::size_t>(head.shape.at(1)) == H);
  REQUIRE(want.size() == V);
  double worst = 0;
  for (std::size_t v = 0; v < V; ++v) {
    double logit = 0;
    for (std::size_t i = 0; i < H; ++i) {
      logit += static_cast<double>(gpu::float_at(head.type, head.data, v * H + i)) * hidden[i];
    }
    const double expected = want[v];
    const double scale = relative ? std::max(1.0, std::abs(expected)) : 1.0;
    worst = std::max(worst, std::abs(logit - expected) / scale);
  }
  return worst;
}

// Every greedy run of fixture `name`: generate(request) gives 32 tokens, which must equal the
// reference's up to its first step with a margin under 1e-3 (a near-tie the reference itself
// does not decide).
inline void check_greedy_tokens(
    const std::string& name,
    const std::function<std::vector<model::token_id>(const model::generate_request&)>& generate) {
  reference ref(name);
  REQUIRE(ref.num_greedy() > 0);
  for (int g = 0; g < ref.num_greedy(); ++g) {
    const std::string key = "g" + std::to_string(g);
    const int p = ref.i32(key + ".prompt")[0];
    model::generate_request req;
    req.prompt = ref.ids("p" + std::to_string(p) + ".ids");
    req.max_tokens = 32;
    req.ignore_eos = true;
    const auto got = generate(req);
    const auto want = ref.ids(key + ".f32.ids");
    const auto margins = ref.f32(key + ".f32.margins");
    REQUIRE(got.size() == 32);
    int compared = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (margins[i] < 1e-3f) break;
      INFO(name << " greedy run " << g << " step " << i);
      REQUIRE(got[i] == want[i]);
      ++compared;
    }
    CHECK(compared > 0);
  }
}

}  // namespace courier::test
