#include "actors/cli/request_json.hpp"

#include <fmt/format.h>

#include <set>

#include "actors/cli/args.hpp"

namespace courier::cli {

namespace {

template <class T>
T get_as(const nlohmann::json& j, const char* key, const std::string& where, const char* kind) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw usage_error(fmt::format("{}: field '{}' must be {}", where, key, kind));
  }
}

}  // namespace

generate_line parse_generate_line(const nlohmann::json& j, const std::string& where,
                                  const text::tokenizer* tok) {
  static const std::set<std::string> known = {
      "id", "prompt_ids", "prompt", "max_tokens", "temperature", "top_p", "top_k", "min_p",
      "seed", "stop_token_ids", "repetition_penalty", "presence_penalty", "frequency_penalty",
      "ignore_eos", "min_tokens", "logprobs"};
  if (!j.is_object()) throw usage_error(where + ": expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      throw usage_error(fmt::format("{}: unknown field '{}'", where, it.key()));
    }
  }
  generate_line g;
  msg::submit& s = g.request;
  if (j.contains("id")) {
    g.id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
  }
  if (j.contains("prompt")) {
    if (!tok) throw usage_error(where + ": field 'prompt' (text) needs a tokenizer; use prompt_ids");
    s.prompt = tok->encode(get_as<std::string>(j, "prompt", where, "a string"));
  } else if (j.contains("prompt_ids")) {
    s.prompt = get_as<std::vector<msg::token_id>>(j, "prompt_ids", where, "an array of token ids");
  } else {
    throw usage_error(where + ": field 'prompt_ids' or 'prompt' is required");
  }
  if (j.contains("max_tokens")) s.max_tokens = get_as<std::int32_t>(j, "max_tokens", where, "an integer");
  auto num = [&](const char* k, float& out) {
    if (j.contains(k)) out = get_as<float>(j, k, where, "a number");
  };
  num("temperature", s.sampling.temperature);
  num("top_p", s.sampling.top_p);
  num("min_p", s.sampling.min_p);
  num("repetition_penalty", s.sampling.repetition_penalty);
  num("presence_penalty", s.sampling.presence_penalty);
  num("frequency_penalty", s.sampling.frequency_penalty);
  if (j.contains("top_k")) s.sampling.top_k = get_as<std::int32_t>(j, "top_k", where, "an integer");
  if (j.contains("seed")) {
    s.sampling.seed = get_as<std::uint64_t>(j, "seed", where, "a non-negative integer");
    s.sampling.has_seed = true;
  }
  if (j.contains("logprobs")) {
    s.sampling.logprobs = get_as<std::int32_t>(j, "logprobs", where, "an integer");
  }
  if (j.contains("stop_token_ids")) {
    s.stop_token_ids =
        get_as<std::vector<msg::token_id>>(j, "stop_token_ids", where, "an array of token ids");
  }
  if (j.contains("ignore_eos")) s.ignore_eos = get_as<bool>(j, "ignore_eos", where, "a boolean");
  if (j.contains("min_tokens")) {  // the scheduler refuses it past max_tokens
    s.sampling.min_tokens = get_as<std::int32_t>(j, "min_tokens", where, "an integer");
  }
  return g;
}

nlohmann::json generate_output(const std::string& id, const std::vector<msg::token_id>& tokens,
                               const std::vector<msg::token_logprob>& logprobs,
                               const msg::token_event& last, bool with_logprobs,
                               const text::tokenizer* tok) {
  nlohmann::json j;
  j["id"] = id;
  j["token_ids"] = tokens;
  if (tok) j["text"] = tok->decode(tokens, /*skip_special_tokens=*/true);
  j["finish_reason"] = msg::to_string(last.finish);
  if (last.finish == msg::finish_reason::error) {
    j["error"] = {{"code", msg::to_string(last.error)}, {"message", last.message}};
  }
  j["usage"] = {{"prompt_tokens", last.use.prompt_tokens},
                {"completion_tokens", last.use.completion_tokens},
                {"cached_tokens", last.use.cached_tokens}};
  if (with_logprobs) {
    nlohmann::json lp = nlohmann::json::array();
    for (const auto& s : logprobs) {
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

}  // namespace courier::cli
