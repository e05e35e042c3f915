// courier generate: run a model on token-id prompts, one JSON line per request.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "actors/cli/model_setup.hpp"
#include "gpu/model/generate_one.hpp"

namespace courier::cli {

namespace {

constexpr const char* generate_help =
    "usage: courier generate --model DIR --prompt-ids 1,2,3 [options]\n"
    "  --config FILE        YAML config (default: none; built-in defaults)\n"
    "  --set key=value      override a config key (repeatable)\n"
    "  --backend sim|cuda|auto\n"
    "  --max-tokens N       default 16\n"
    "  --temperature T --top-p P --top-k K --min-p P --seed S\n"
    "  --repetition-penalty R --presence-penalty P --frequency-penalty F\n"
    "  --stop-ids 1,2       extra stop token ids   --ignore-eos\n"
    "  --logprobs N         include the top-N logprobs of each token\n";

nlohmann::json result_json(const std::string& id, const model::generate_result& r,
                           int logprobs) {
  nlohmann::json j;
  j["id"] = id;
  j["token_ids"] = r.tokens;
  j["finish_reason"] = r.finish_reason;
  if (logprobs > 0) {
    nlohmann::json lp = nlohmann::json::array();
    for (const auto& s : r.samples) {
      nlohmann::json top = nlohmann::json::array();
      for (std::size_t i = 0; i < s.top_ids.size(); ++i) {
        top.push_back({{"token_id", s.top_ids[i]}, {"logprob", s.top_logprobs[i]}});
      }
      lp.push_back({{"token_id", s.token}, {"logprob", s.logprob}, {"top_logprobs", top}});
    }
    j["logprobs"] = lp;
  }
  return j;
}

}  // namespace

int run_generate(int argc, char** argv) {
  try {
    args a(argc, argv, 2,
           {"config", "model", "backend", "prompt-ids", "max-tokens", "temperature", "top-p",
            "top-k", "min-p", "seed", "repetition-penalty", "presence-penalty",
            "frequency-penalty", "stop-ids", "logprobs"},
           {"ignore-eos", "help"});
    if (a.has("help")) {
      std::fputs(generate_help, stdout);
      return 0;
    }
    std::vector<std::string> sets = a.sets();
    if (auto m = a.get("model")) sets.insert(sets.begin(), "model.path=" + *m);
    if (auto b = a.get("backend")) sets.insert(sets.begin(), "device.backend=" + *b);
    const config::server_config cfg = config::load_config(a.get_or("config", ""), sets);
    const auto ids = a.get("prompt-ids");
    if (!ids) throw usage_error("--prompt-ids is required (e.g. --prompt-ids 1,2,3)");

    model::generate_request req;
    for (unsigned t : parse_id_list(*ids, "--prompt-ids")) req.prompt.push_back(t);
    req.max_tokens = static_cast<std::int32_t>(a.get_int("max-tokens").value_or(16));
    if (req.max_tokens < 1) throw usage_error("--max-tokens must be at least 1");
    req.sampling.temperature = static_cast<float>(a.get_double("temperature").value_or(0.0));
    req.sampling.top_p = static_cast<float>(a.get_double("top-p").value_or(1.0));
    req.sampling.top_k = static_cast<std::int32_t>(a.get_int("top-k").value_or(0));
    req.sampling.min_p = static_cast<float>(a.get_double("min-p").value_or(0.0));
    req.sampling.seed = static_cast<std::uint64_t>(a.get_int("seed").value_or(0));
    req.sampling.repetition_penalty =
        static_cast<float>(a.get_double("repetition-penalty").value_or(1.0));
    req.sampling.presence_penalty =
        static_cast<float>(a.get_double("presence-penalty").value_or(0.0));
    req.sampling.frequency_penalty =
        static_cast<float>(a.get_double("frequency-penalty").value_or(0.0));
    const int logprobs = static_cast<int>(a.get_int("logprobs").value_or(0));
    if (logprobs < 0 || logprobs > gpu::max_logprobs) {
      throw usage_error(fmt::format("--logprobs must be in [0, {}]", gpu::max_logprobs));
    }
    req.sampling.num_logprobs = logprobs;
    if (auto s = a.get("stop-ids")) {
      for (unsigned t : parse_id_list(*s, "--stop-ids")) req.stop_token_ids.push_back(t);
    }
    req.ignore_eos = a.has("ignore-eos");
    req.max_model_len = cfg.model.max_model_len;

    loaded_model m = load_model(cfg);
    const std::int32_t bs = cfg.scheduler.block_size;
    const std::int64_t need = (static_cast<std::int64_t>(req.prompt.size()) + req.max_tokens +
                               bs - 1) / bs;
    const std::int32_t blocks =
        static_cast<std::int32_t>(std::min<std::int64_t>(need, kv_blocks_for(cfg, m)));
    model::kv_cache cache(*m.dev, m.model->config(), blocks, bs);
    const model::generate_result r = model::generate_one(*m.model, cache, req);
    std::cout << result_json("gen-0", r, logprobs).dump() << std::endl;
    return 0;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "courier generate: %s\n%s", e.what(), generate_help);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "courier generate: %s\n", e.what());
    return 1;
  }
}

}  // namespace courier::cli
