#include "actors/admission/api_request.hpp"

#include <fmt/format.h>

#include <set>

namespace courier::admission {

using nlohmann::json;

json api_error::to_json() const {
  return {{"error",
           {{"message", what()},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

namespace {

// Fields a client may send that courier accepts but does not act on.
const std::set<std::string> ignored_fields = {"user", "metadata", "store", "service_tier",
                                              "parallel_tool_calls", "tool_choice"};

const std::set<std::string> common_fields = {
    "model", "n", "stream", "stream_options", "temperature", "top_p", "top_k", "min_p",
    "seed", "stop", "stop_token_ids", "presence_penalty", "frequency_penalty",
    "repetition_penalty", "ignore_eos", "skip_special_tokens", "return_token_ids", "max_tokens",
    "logit_bias", "best_of"};
const std::set<std::string> completion_fields = {"prompt", "echo", "logprobs"};
const std::set<std::string> chat_fields = {"messages", "logprobs", "top_logprobs", "tools",
                                           "max_completion_tokens", "add_generation_prompt",
                                           "chat_template_kwargs", "response_format"};

api_error bad(const std::string& field, const std::string& what) {
  return api_error(400, fmt::format("'{}': {}", field, what), field);
}

double number(const json& j, const char* key, double lo, double hi) {
  const json& v = j.at(key);
  if (!v.is_number()) throw bad(key, "expected a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) throw bad(key, fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

std::int64_t integer(const json& j, const char* key, std::int64_t lo, std::int64_t hi) {
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw bad(key, "expected an integer");
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    throw bad(key, fmt::format("must be in [{}, {}], got {}", lo, hi, v.dump()));
  }
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) throw bad(key, fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

bool boolean(const json& j, const char* key) {
  if (!j.at(key).is_boolean()) throw bad(key, "expected true or false");
  return j.at(key).get<bool>();
}

std::vector<msg::token_id> token_list(const json& v, const char* key, std::int32_t vocab) {
  std::vector<msg::token_id> ids;
  for (const json& t : v) {
    if (!t.is_number_integer() || t.get<std::int64_t>() < 0 || t.get<std::int64_t>() >= vocab) {
      throw bad(key, fmt::format("token ids must be integers in [0, {})", vocab));
    }
    ids.push_back(t.get<msg::token_id>());
  }
  return ids;
}

const text::tokenizer& need_tokenizer(const admission_context& ctx, const char* field) {
  if (!ctx.tok) {
    throw bad(field, "this model has no tokenizer: send token ids instead of text");
  }
  return *ctx.tok;
}

void parse_completion_prompt(const json& j, const admission_context& ctx, api_request& r) {
  if (!j.contains("prompt")) throw bad("prompt", "is required");
  const json& p = j.at("prompt");
  auto text_prompt = [&](const json& s) {
    return need_tokenizer(ctx, "prompt").encode(s.get<std::string>());
  };
  if (p.is_string()) {
    r.prompts.push_back(text_prompt(p));
  } else if (p.is_array() && !p.empty() && p[0].is_string()) {
    for (const json& s : p) {
      if (!s.is_string()) throw bad("prompt", "a list of prompts must all be strings");
      r.prompts.push_back(text_prompt(s));
    }
  } else if (p.is_array() && !p.empty() && p[0].is_array()) {
    for (const json& s : p) {
      if (!s.is_array()) throw bad("prompt", "a list of token-id prompts must all be lists");
      r.prompts.push_back(token_list(s, "prompt", ctx.vocab_size));
    }
  } else if (p.is_array() && !p.empty()) {
    r.prompts.push_back(token_list(p, "prompt", ctx.vocab_size));
  } else {
    throw bad("prompt", "expected a string, a list of strings, token ids or lists of token ids");
  }
  for (const auto& ids : r.prompts) {
    if (ids.empty()) throw bad("prompt", "a prompt is empty");
  }
  if (r.prompts.size() > 64) throw bad("prompt", "at most 64 prompts per request");
}

void parse_chat_prompt(const json& j, const std::string& body, const admission_context& ctx,
                       api_request& r) {
  if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty()) {
    throw bad("messages", "expected a non-empty list of messages");
  }
  for (const json& m : j["messages"]) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      throw bad("messages", "each message needs a string 'role'");
    }
  }
  if (!ctx.chat) {
    throw api_error(400, "this model has no chat template: use /v1/completions", "messages");
  }
  const text::tokenizer& tok = need_tokenizer(ctx, "messages");
  // The template sees the request's objects in their own key order (tojson keeps it, as
  // transformers does), so the context is built from an order-keeping parse of the body.
  const nlohmann::ordered_json oj = nlohmann::ordered_json::parse(body);
  nlohmann::ordered_json context = {{"messages", oj["messages"]},
                                    {"add_generation_prompt", true},
                                    {"bos_token", ctx.bos_token},
                                    {"eos_token", ctx.eos_token}};
  if (oj.contains("tools")) context["tools"] = oj["tools"];
  if (j.contains("add_generation_prompt")) {
    context["add_generation_prompt"] = boolean(j, "add_generation_prompt");
  }
  if (j.contains("chat_template_kwargs")) {
    if (!j["chat_template_kwargs"].is_object()) throw bad("chat_template_kwargs", "expected an object");
    for (auto it = oj["chat_template_kwargs"].begin(); it != oj["chat_template_kwargs"].end();
         ++it) {
      context[it.key()] = it.value();
    }
  }
  std::string rendered;
  try {
    rendered = ctx.chat->render(context);
  } catch (const text::jinja::template_error& e) {
    throw api_error(400, std::string("chat template: ") + e.what(), "messages");
  }
  // The template already wrote the special tokens (BOS, role markers) as text.
  r.prompts.push_back(tok.encode(rendered, /*add_special_tokens=*/false));
}

void parse_stop(const json& j, const admission_context& ctx, api_request& r) {
  if (j.contains("stop") && !j["stop"].is_null()) {
    const json& s = j["stop"];
    if (s.is_string()) {
      r.stop.push_back(s.get<std::string>());
    } else if (s.is_array()) {
      for (const json& x : s) {
        if (!x.is_string()) throw bad("stop", "expected a string or a list of strings");
        r.stop.push_back(x.get<std::string>());
      }
    } else {
      throw bad("stop", "expected a string or a list of strings");
    }
    if (r.stop.size() > 16) throw bad("stop", "at most 16 stop strings");
    if (!r.stop.empty() && !ctx.tok) throw bad("stop", "stop strings need a tokenizer; use stop_token_ids");
  }
  if (j.contains("stop_token_ids")) {
    if (!j["stop_token_ids"].is_array()) throw bad("stop_token_ids", "expected a list of token ids");
    r.stop_token_ids = token_list(j["stop_token_ids"], "stop_token_ids", ctx.vocab_size);
  }
}

}  // namespace

api_request parse_api_request(endpoint kind, const std::string& body, const admission_context& ctx) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw api_error(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw api_error(400, "the body must be a JSON object");
  const auto& own = kind == endpoint::chat ? chat_fields : completion_fields;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!common_fields.count(it.key()) && !own.count(it.key()) && !ignored_fields.count(it.key())) {
      throw bad(it.key(), "unsupported field");
    }
  }
  api_request r;
  r.kind = kind;
  if (!j.contains("model") || !j["model"].is_string()) throw bad("model", "is required (a string)");
  r.model = j["model"].get<std::string>();
  if (r.model != ctx.model_name) {
    throw api_error(404, fmt::format("the model '{}' does not exist; this server serves '{}'",
                                     r.model, ctx.model_name),
                    "model", "not_found_error");
  }
  if (j.contains("logit_bias") && !j["logit_bias"].is_null() && !j["logit_bias"].empty()) {
    throw bad("logit_bias", "is not supported");
  }
  if (j.contains("best_of") && !j["best_of"].is_null() && integer(j, "best_of", 1, 1) != 1) {
    throw bad("best_of", "only 1 is supported");
  }
  if (j.contains("response_format") && !(j["response_format"].is_object() &&
                                         j["response_format"].value("type", "") == "text")) {
    throw bad("response_format", "only {\"type\": \"text\"} is supported");
  }
  if (j.contains("n")) r.n = static_cast<std::int32_t>(integer(j, "n", 1, ctx.max_n));
  if (j.contains("stream")) r.stream = boolean(j, "stream");
  if (j.contains("stream_options") && !j["stream_options"].is_null()) {
    const json& so = j["stream_options"];
    if (!so.is_object()) throw bad("stream_options", "expected an object");
    if (!r.stream) throw bad("stream_options", "is only allowed with stream: true");
    if (so.contains("include_usage")) r.include_usage = boolean(so, "include_usage");
  }
  msg::sampling_params& s = r.sampling;
  if (j.contains("temperature")) s.temperature = static_cast<float>(number(j, "temperature", 0, 2));
  if (j.contains("top_p")) s.top_p = static_cast<float>(number(j, "top_p", 1e-9, 1));
  if (j.contains("top_k")) s.top_k = static_cast<std::int32_t>(integer(j, "top_k", -1, 1 << 30));
  if (j.contains("min_p")) s.min_p = static_cast<float>(number(j, "min_p", 0, 1));
  if (j.contains("presence_penalty"))
    s.presence_penalty = static_cast<float>(number(j, "presence_penalty", -2, 2));
  if (j.contains("frequency_penalty"))
    s.frequency_penalty = static_cast<float>(number(j, "frequency_penalty", -2, 2));
  if (j.contains("repetition_penalty"))
    s.repetition_penalty = static_cast<float>(number(j, "repetition_penalty", 0.01, 100));
  if (j.contains("seed") && !j["seed"].is_null()) {
    s.seed = static_cast<std::uint64_t>(integer(j, "seed", INT64_MIN, INT64_MAX));
    s.has_seed = true;
  }
  if (j.contains("ignore_eos")) r.ignore_eos = boolean(j, "ignore_eos");
  if (j.contains("skip_special_tokens")) r.skip_special_tokens = boolean(j, "skip_special_tokens");
  if (j.contains("return_token_ids")) r.return_token_ids = boolean(j, "return_token_ids");
  parse_stop(j, ctx, r);

  if (kind == endpoint::completions) {
    parse_completion_prompt(j, ctx, r);
    if (j.contains("echo")) r.echo = boolean(j, "echo");
    if (j.contains("logprobs") && !j["logprobs"].is_null()) {
      r.logprobs = static_cast<std::int32_t>(integer(j, "logprobs", 0, 20));
    }
  } else {
    parse_chat_prompt(j, body, ctx, r);
    const bool want = j.contains("logprobs") && !j["logprobs"].is_null() && boolean(j, "logprobs");
    if (j.contains("top_logprobs") && !j["top_logprobs"].is_null()) {
      if (!want) throw bad("top_logprobs", "needs logprobs: true");
      r.logprobs = static_cast<std::int32_t>(integer(j, "top_logprobs", 0, 20));
    } else if (want) {
      r.logprobs = 0;
    }
  }
  s.logprobs = r.logprobs;
  if (r.echo && r.logprobs >= 0) s.prompt_logprobs = r.logprobs;  // echo scores the prompt too

  // max_tokens: the completion's budget; the prompt plus it must fit max_model_len.
  std::size_t longest = 0;
  for (const auto& p : r.prompts) longest = std::max(longest, p.size());
  const auto prompt_len = static_cast<std::int64_t>(longest);
  if (prompt_len >= ctx.max_model_len) {
    throw api_error(400, fmt::format("this model's maximum context length is {} tokens; the "
                                     "prompt has {}", ctx.max_model_len, prompt_len),
                    kind == endpoint::chat ? "messages" : "prompt");
  }
  const char* budget_key = j.contains("max_completion_tokens") ? "max_completion_tokens"
                                                               : "max_tokens";
  if (j.contains(budget_key) && !j[budget_key].is_null()) {
    const std::int64_t m = integer(j, budget_key, r.echo ? 0 : 1, INT32_MAX);
    if (prompt_len + m > ctx.max_model_len) {
      throw api_error(400, fmt::format("this model's maximum context length is {} tokens; the "
                                       "prompt has {} and {} asks for {} more",
                                       ctx.max_model_len, prompt_len, budget_key, m),
                      budget_key);
    }
    r.max_tokens = static_cast<std::int32_t>(m);
  } else if (kind == endpoint::chat) {
    r.max_tokens = static_cast<std::int32_t>(ctx.max_model_len - prompt_len);
  } else {
    r.max_tokens = static_cast<std::int32_t>(std::min<std::int64_t>(16, ctx.max_model_len - prompt_len));
  }
  return r;
}

}  // namespace courier::admission
