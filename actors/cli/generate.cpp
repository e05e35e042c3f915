// courier generate: run token-id prompts through the scheduler and the engine, concurrently,
// printing one JSON line per request (in input order).
#include <caf/all.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "actors/cli/request_json.hpp"
#include "actors/runtime/runtime.hpp"

namespace courier::cli {

namespace {

constexpr const char* generate_help =
    "usage: courier generate (--prompt-ids 1,2,3 | --prompts FILE.jsonl) [options]\n"
    "  --model DIR          Hugging Face model folder (model.path)\n"
    "  --config FILE        YAML config (default: built-in defaults)\n"
    "  --set key=value      override a config key (repeatable)\n"
    "  --backend sim|cuda|auto\n"
    "  --prompts FILE       JSONL, one request a line: id, prompt_ids or prompt (text, when the\n"
    "                       model has a tokenizer), max_tokens, temperature,\n"
    "                       top_p, top_k, min_p, seed, stop_token_ids, repetition_penalty,\n"
    "                       presence_penalty, frequency_penalty, ignore_eos, min_tokens,\n"
    "                       logprobs\n"
    "  defaults for every request (a line's own fields win):\n"
    "  --max-tokens N (16)  --temperature T (0: greedy)  --top-p P  --top-k K  --min-p P\n"
    "  --seed S  --repetition-penalty R  --presence-penalty P  --frequency-penalty F\n"
    "  --stop-ids 1,2  --ignore-eos  --min-tokens N  --logprobs N\n";

// The flags as a JSON object of request fields, the defaults of every line.
nlohmann::json defaults_from(const args& a) {
  nlohmann::json d = {{"max_tokens", 16}, {"temperature", 0.0}};
  if (auto v = a.get_int("max-tokens")) d["max_tokens"] = *v;
  const std::pair<const char*, const char*> floats[] = {
      {"temperature", "temperature"}, {"top-p", "top_p"}, {"min-p", "min_p"},
      {"repetition-penalty", "repetition_penalty"}, {"presence-penalty", "presence_penalty"},
      {"frequency-penalty", "frequency_penalty"}};
  for (const auto& [flag, key] : floats) {
    if (auto v = a.get_double(flag)) d[key] = *v;
  }
  if (auto v = a.get_int("top-k")) d["top_k"] = *v;
  if (auto v = a.get_int("seed")) d["seed"] = *v;
  if (auto v = a.get_int("logprobs")) d["logprobs"] = *v;
  if (auto v = a.get_int("min-tokens")) d["min_tokens"] = *v;
  if (auto v = a.get("stop-ids")) d["stop_token_ids"] = parse_id_list(*v, "--stop-ids");
  if (a.has("ignore-eos")) d["ignore_eos"] = true;
  return d;
}

std::vector<generate_line> read_requests(const args& a, const text::tokenizer* tok) {
  const nlohmann::json defaults = defaults_from(a);
  std::vector<generate_line> out;
  auto add = [&](nlohmann::json line, const std::string& where) {
    if (!line.is_object()) throw usage_error(where + ": expected a JSON object");
    nlohmann::json merged = defaults;
    merged.update(line);
    generate_line g = parse_generate_line(merged, where, tok);
    if (g.id.empty()) g.id = fmt::format("gen-{}", out.size());
    out.push_back(std::move(g));
  };
  if (auto ids = a.get("prompt-ids")) {
    nlohmann::json line;
    line["prompt_ids"] = parse_id_list(*ids, "--prompt-ids");
    add(line, "--prompt-ids");
  }
  if (auto path = a.get("prompts")) {
    std::ifstream in(*path);
    if (!in) throw std::runtime_error(*path + ": cannot read");
    std::string text;
    int n = 0;
    while (std::getline(in, text)) {
      ++n;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = fmt::format("{}:{}", *path, n);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::parse_error& e) {
        throw usage_error(where + ": not JSON: " + e.what());
      }
      add(std::move(j), where);
    }
  }
  if (out.empty()) throw usage_error("give --prompt-ids or --prompts FILE");
  return out;
}

}  // namespace

int run_generate(int argc, char** argv) {
  return run_command(
      "generate",
      [&]() -> int {
        args a(argc, argv, 2,
               {"config", "model", "backend", "prompt-ids", "prompts", "max-tokens", "temperature",
                "top-p", "top-k", "min-p", "seed", "repetition-penalty", "presence-penalty",
                "frequency-penalty", "stop-ids", "min-tokens", "logprobs"},
               {"ignore-eos", "help"});
        if (a.has("help")) {
          std::fputs(generate_help, stdout);
          return 0;
        }
        const config::server_config cfg =
            config::load_config(a.get_or("config", ""), config_sets(a, a.get("model")));
        std::unique_ptr<text::tokenizer> tok;
        const std::string tok_path = cfg.model.path + "/tokenizer.json";
        if (std::ifstream(tok_path).good()) {
          tok = std::make_unique<text::tokenizer>(text::tokenizer::load(tok_path));
        }
        std::vector<generate_line> lines = read_requests(a, tok.get());

        actors::runtime rt(cfg);
        caf::scoped_actor self{rt.system()};
        struct progress {
          std::vector<msg::token_id> tokens;
          std::vector<msg::token_logprob> logprobs;
          msg::token_event last;
          bool done = false;
        };
        std::vector<progress> results(lines.size());
        for (std::size_t i = 0; i < lines.size(); ++i) {
          msg::submit s = lines[i].request;
          s.id = i + 1;
          s.reply_to = caf::actor_cast<caf::actor>(self);
          self->send(rt.scheduler(), std::move(s));
        }
        std::size_t pending = lines.size();
        self->receive_while([&] { return pending > 0; })([&](msg::token_event& e) {
          progress& p = results.at(e.id - 1);
          p.tokens.insert(p.tokens.end(), e.tokens.begin(), e.tokens.end());
          p.logprobs.insert(p.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
          if (e.finish != msg::finish_reason::none) {
            p.last = std::move(e);
            p.done = true;
            --pending;
          }
        });
        int status = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
          const progress& p = results[i];
          if (p.last.finish == msg::finish_reason::error) {
            status = 1;
            std::fprintf(stderr, "courier generate: %s: %s\n", lines[i].id.c_str(),
                         p.last.message.c_str());
          }
          std::cout << generate_output(lines[i].id, p.tokens, p.logprobs, p.last,
                                       lines[i].request.sampling.logprobs >= 0, tok.get())
                           .dump()
                    << "\n";
        }
        std::cout.flush();
        return status;
      },
      generate_help);
}

}  // namespace courier::cli
