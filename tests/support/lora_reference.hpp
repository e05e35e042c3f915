#pragma once
// The prompt's greedy continuation on a sim model of a fixture, alone, with a LoRA adapter (a
// PEFT folder; empty: the base model): what a server's request for the adapter must give.
#include <string>
#include <vector>

#include "gpu/model/generate_one.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/reference_match.hpp"

namespace courier::test {

inline reference_output lora_reference(const std::string& name, const std::string& adapter,
                                       const std::vector<model::token_id>& prompt,
                                       int max_tokens) {
  sim_model sm(name);
  if (!adapter.empty()) {
    sm.model->reserve_loras(1, 16);
    sm.model->load_lora(0, *model::load_lora_adapter("x", adapter, sm.model->config(), 16));
  }
  model::kv_cache cache(*sm.dev, sm.model->config(), 64, 16);
  model::generate_request g;
  g.prompt.assign(prompt.begin(), prompt.end());
  g.max_tokens = max_tokens;
  g.ignore_eos = true;
  g.lora_slot = adapter.empty() ? -1 : 0;
  return reference_alone(*sm.model, cache, g);
}

}  // namespace courier::test
