#include "actors/admission/api_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "actors/admission/chat_messages.hpp"
#include "actors/admission/json_body.hpp"
#include "actors/admission/structured_outputs.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::admission {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Fields courier acts on. Any other top-level field is ignored (and reported).
const std::set<std::string> common_fields = {
    "model", "n", "stream", "stream_options", "temperature", "top_p", "top_k", "min_p",
    "seed", "stop", "stop_token_ids", "presence_penalty", "frequency_penalty",
    "repetition_penalty", "ignore_eos", "skip_special_tokens", "return_token_ids", "max_tokens",
    "logit_bias", "best_of", "include_stop_str_in_output", "min_tokens"};
const std::set<std::string> completion_fields = {"prompt", "echo", "logprobs"};
const std::set<std::string> chat_fields = {"messages", "logprobs", "top_logprobs", "tools",
                                           "tool_choice", "parallel_tool_calls",
                                           "max_completion_tokens", "add_generation_prompt",
                                           "chat_template_kwargs", "continue_final_message",
                                           "echo"};
// Variables the chat template gets from courier itself.
const std::set<std::string> template_variables = {"messages", "tools", "add_generation_prompt",
                                                  "bos_token", "eos_token"};

api_error too_long(const admission_context& ctx, std::int64_t prompt_len, const char* field,
                   const std::string& more = {}) {
  return api_error(400,
                   fmt::format("this model's maximum context length is {} tokens; the prompt "
                               "has {}{}",
                               ctx.max_model_len, prompt_len, more),
                   field, "invalid_request_error", "context_length_exceeded");
}

double number(const json& j, const char* key, double lo, double hi) {
  const json& v = j.at(key);
  if (!v.is_number()) throw bad_field(key, "expected a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi))
    throw bad_field(key, fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

// `limit`: the config key that sets `hi`, named in the error.
std::int64_t integer(const json& j, const char* key, std::int64_t lo, std::int64_t hi,
                     const char* limit = nullptr) {
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw bad_field(key, "expected an integer");
  const bool above = v.is_number_unsigned() &&
                     v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  if (above || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
    throw bad_field(key, fmt::format("must be in [{}, {}]{}, got {}", lo, hi,
                                     limit ? fmt::format(" ({})", limit) : "", v.dump()));
  }
  return v.get<std::int64_t>();
}

bool boolean(const json& j, const char* key) {
  if (!j.at(key).is_boolean()) throw bad_field(key, "expected true or false");
  return j.at(key).get<bool>();
}

std::vector<msg::token_id> token_list(const json& v, const char* key, std::int32_t vocab) {
  std::vector<msg::token_id> ids;
  for (const json& t : v) {
    if (!t.is_number_integer() || t.get<std::int64_t>() < 0 || t.get<std::int64_t>() >= vocab) {
      throw bad_field(key, fmt::format("token ids must be integers in [0, {})", vocab));
    }
    ids.push_back(t.get<msg::token_id>());
  }
  return ids;
}

const text::tokenizer& need_tokenizer(const admission_context& ctx, const char* field) {
  if (!ctx.tok) {
    throw bad_field(field, "this model has no tokenizer: send token ids instead of text");
  }
  return *ctx.tok;
}

// Text whose length in bytes already proves that it is more than max_model_len tokens is
// refused before tokenizing (tokenizer::max_text_bytes_per_id).
void refuse_if_surely_too_long(const admission_context& ctx, std::size_t text_bytes,
                               const char* field) {
  if (ctx.max_text_bytes_per_id == 0) return;
  const std::size_t fewest_tokens = text_bytes / ctx.max_text_bytes_per_id;
  if (static_cast<std::int64_t>(fewest_tokens) >= ctx.max_model_len) {
    throw too_long(ctx, static_cast<std::int64_t>(fewest_tokens), field,
                   fmt::format(" or more ({} bytes of text)", text_bytes));
  }
}

// Text to ids, giving up once they are more than max_model_len: a prompt that long is refused
// whatever comes after it, and encoding the rest (megabytes, sometimes) would only cost time.
std::vector<msg::token_id> encode_text(const admission_context& ctx, const std::string& text,
                                       const char* field, bool add_special_tokens) {
  const text::tokenizer& tok = need_tokenizer(ctx, field);
  refuse_if_surely_too_long(ctx, text.size(), field);
  const auto limit = static_cast<std::size_t>(std::max<std::int64_t>(ctx.max_model_len, 0));
  auto ids = tok.encode_at_most(text, limit, add_special_tokens);
  if (!ids) throw too_long(ctx, ctx.max_model_len + 1, field, " or more");
  return std::move(*ids);
}

}  // namespace

std::vector<std::vector<msg::token_id>> parse_prompts(const json& p, const char* field,
                                                      const admission_context& ctx,
                                                      std::size_t max_prompts,
                                                      const char* limit) {
  std::vector<std::vector<msg::token_id>> prompts;
  auto text_prompt = [&](const json& s) {
    return encode_text(ctx, s.get_ref<const std::string&>(), field, true);
  };
  const bool many = p.is_array() && !p.empty() && (p[0].is_string() || p[0].is_array());
  if (many && p.size() > max_prompts) {
    throw bad_field(field, fmt::format("at most {} prompts per request ({})", max_prompts, limit));
  }
  if (p.is_string()) {
    prompts.push_back(text_prompt(p));
  } else if (p.is_array() && !p.empty() && p[0].is_string()) {
    for (const json& s : p) {
      if (!s.is_string()) throw bad_field(field, "a list of prompts must all be strings");
      prompts.push_back(text_prompt(s));
    }
  } else if (p.is_array() && !p.empty() && p[0].is_array()) {
    for (const json& s : p) {
      if (!s.is_array()) throw bad_field(field, "a list of token-id prompts must all be lists");
      prompts.push_back(token_list(s, field, ctx.vocab_size));
    }
  } else if (p.is_array() && !p.empty()) {
    prompts.push_back(token_list(p, field, ctx.vocab_size));
  } else {
    throw bad_field(field, "expected a string, a list of strings, token ids or lists of token ids");
  }
  for (const auto& ids : prompts) {
    if (ids.empty()) throw bad_field(field, "a prompt is empty");
  }
  return prompts;
}

namespace {

void parse_completion_prompt(const json& j, const admission_context& ctx, api_request& r) {
  if (!j.contains("prompt")) throw bad_field("prompt", "is required");
  r.prompts = parse_prompts(j.at("prompt"), "prompt", ctx,
                            static_cast<std::size_t>(ctx.max_sequences_per_request),
                            "server.max_sequences_per_request");
}

bool continues_final_message(const json& j) {
  return j.contains("continue_final_message") && boolean(j, "continue_final_message");
}

// transformers' continue_final_message: the rendering cut right after the final message's text,
// so that the answer continues it (an assistant prefill: `{"answer":`). The text as written, or
// else without its surrounding whitespace, which a template may strip; a template that writes
// neither is a 400.
std::string cut_after_final_message(std::string rendered, const std::string& final_text) {
  // Stripped as Python's str.strip() strips, which transformers applies.
  for (const std::string_view t :
       {std::string_view(final_text), text::jinja::utf8::trim(final_text, true, true)}) {
    const std::size_t at = t.empty() ? std::string::npos : rendered.rfind(t);
    if (at != std::string::npos) {
      rendered.resize(at + t.size());
      return rendered;
    }
  }
  throw bad_field("continue_final_message",
                  "the chat template does not write the final message's text, so there is "
                  "nothing to continue");
}

// The chat template's variables. `oj` is the body in its own key order: the template sees the
// request's objects as the client wrote them (tojson keeps the order, as transformers does).
ordered_json template_context(const json& j, const ordered_json& oj,
                              const admission_context& ctx) {
  ordered_json context = {{"messages", template_messages(oj["messages"], ctx.max_json_depth)},
                          {"add_generation_prompt", true},
                          {"bos_token", ctx.bos_token},
                          {"eos_token", ctx.eos_token}};
  if (j.contains("tools")) {
    if (!j["tools"].is_array()) throw bad_field("tools", "expected a list of tools");
    context["tools"] = oj["tools"];
  }
  if (j.contains("add_generation_prompt")) {
    context["add_generation_prompt"] = boolean(j, "add_generation_prompt");
  }
  if (continues_final_message(j)) {
    if (j.contains("add_generation_prompt") && boolean(j, "add_generation_prompt")) {
      throw bad_field("continue_final_message",
                      "cannot be true with add_generation_prompt true: the answer continues the "
                      "final message instead of opening a turn of its own");
    }
    const ordered_json& last = context["messages"].back();
    if (last["role"] != "assistant" || last["content"].get_ref<const std::string&>().empty()) {
      throw bad_field("continue_final_message",
                      "needs a final assistant message with text, which the answer continues");
    }
    context["add_generation_prompt"] = false;
  }
  if (j.contains("chat_template_kwargs")) {
    if (!j["chat_template_kwargs"].is_object()) {
      throw bad_field("chat_template_kwargs", "expected an object");
    }
    // Extra template variables only: never a field that was validated above.
    for (const auto& [key, value] : oj["chat_template_kwargs"].items()) {
      if (template_variables.count(key) || common_fields.count(key) || chat_fields.count(key) ||
          is_structured_output_field(key)) {
        throw bad_field("chat_template_kwargs",
                  fmt::format("'{}' is a request field or a variable courier sets; "
                              "chat_template_kwargs may only add other template variables",
                              key));
      }
      context[key] = value;
    }
  }
  return context;
}

void parse_chat_prompt(const json& j, const ordered_json& oj, const admission_context& ctx,
                       api_request& r) {
  if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty()) {
    throw bad_field("messages", "expected a non-empty list of messages");
  }
  const ordered_json context = template_context(j, oj, ctx);
  if (!ctx.chat) {
    throw api_error(400, "this model has no chat template: use /v1/completions", "messages");
  }
  need_tokenizer(ctx, "messages");
  std::string rendered;
  try {
    rendered = ctx.chat->render(context);
  } catch (const text::jinja::template_error& e) {
    throw api_error(400, std::string("chat template: ") + e.what(), "messages");
  }
  if (continues_final_message(j)) {
    rendered = cut_after_final_message(std::move(rendered),
                                       context["messages"].back()["content"].get<std::string>());
  }
  if (j.contains("echo") && boolean(j, "echo")) {
    const ordered_json& last = context["messages"].back();
    if (last["role"] == "assistant" && last["content"].is_string()) {
      r.echo_text = last["content"].get<std::string>();
    }
  }
  // The template already wrote the special tokens (BOS, role markers) as text.
  r.prompts.push_back(encode_text(ctx, rendered, "messages", /*add_special_tokens=*/false));
  // A template that opens the reasoning block itself (DeepSeek-R1's, Qwen3's with thinking
  // forced) leaves the output inside it.
  const auto opens = [&](const std::string& tail) {
    return rendered.size() >= tail.size() &&
           rendered.compare(rendered.size() - tail.size(), tail.size(), tail) == 0;
  };
  r.read_reasoning = ctx.read_reasoning;
  r.starts_in_reasoning = ctx.read_reasoning && (ctx.reasoning_from_start || opens("<think>\n") ||
                                                 opens("<think>"));
}

void parse_stop(const json& j, const admission_context& ctx, api_request& r) {
  if (j.contains("stop")) {
    const json& s = j["stop"];
    if (s.is_string()) {
      r.stop.push_back(s.get<std::string>());
    } else if (s.is_array()) {
      for (const json& x : s) {
        if (!x.is_string()) throw bad_field("stop", "expected a string or a list of strings");
        r.stop.push_back(x.get<std::string>());
      }
    } else {
      throw bad_field("stop", "expected a string or a list of strings");
    }
    if (r.stop.size() > 16) throw bad_field("stop", "at most 16 stop strings");
    if (!r.stop.empty() && !ctx.tok)
      throw bad_field("stop", "stop strings need a tokenizer; use stop_token_ids");
  }
  if (j.contains("stop_token_ids")) {
    if (!j["stop_token_ids"].is_array())
      throw bad_field("stop_token_ids", "expected a list of token ids");
    r.stop_token_ids = token_list(j["stop_token_ids"], "stop_token_ids", ctx.vocab_size);
  }
}

// {"token id": bias, ...} as OpenAI sends it: keys are token ids written as decimal strings,
// biases in [-100, 100]. Kept sorted by token id.
void parse_logit_bias(const json& j, const admission_context& ctx, msg::sampling_params& s) {
  if (!j.contains("logit_bias")) return;
  const json& lb = j["logit_bias"];
  if (!lb.is_object()) throw bad_field("logit_bias", "expected an object of token id -> bias");
  if (lb.size() > max_logit_bias_entries) {
    throw bad_field("logit_bias", fmt::format("at most {} entries", max_logit_bias_entries));
  }
  for (const auto& [key, value] : lb.items()) {  // json objects iterate in key order
    std::size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used, 10);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty() || key[0] == '-' || key[0] == '+' || id < 0 ||
        id >= ctx.vocab_size) {
      throw bad_field("logit_bias", fmt::format("'{}' is not a token id in [0, {})", key,
                                          ctx.vocab_size));
    }
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100)) {
      throw bad_field("logit_bias",
                      fmt::format("the bias of token {} must be a number in [-100, 100]", key));
    }
    s.logit_bias_tokens.push_back(static_cast<msg::token_id>(id));
    s.logit_bias_values.push_back(value.get<float>());
  }
  // Keys sort as strings ("10" < "9"); the scheduler and the samplers want token order.
  std::vector<std::size_t> order(s.logit_bias_tokens.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return s.logit_bias_tokens[a] < s.logit_bias_tokens[b];
  });
  std::vector<msg::token_id> tokens;
  std::vector<float> values;
  for (std::size_t i : order) {
    if (!tokens.empty() && tokens.back() == s.logit_bias_tokens[i]) {
      throw bad_field("logit_bias", fmt::format("token {} is given twice", tokens.back()));
    }
    tokens.push_back(s.logit_bias_tokens[i]);
    values.push_back(s.logit_bias_values[i]);
  }
  s.logit_bias_tokens = std::move(tokens);
  s.logit_bias_values = std::move(values);
}

void parse_sampling(const json& j, const admission_context& ctx, api_request& r) {
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
  if (j.contains("seed")) {
    s.seed = static_cast<std::uint64_t>(integer(j, "seed", INT64_MIN, INT64_MAX));
    s.has_seed = true;
  }
  parse_logit_bias(j, ctx, s);
}

// The completion's budget; the prompt plus it must fit max_model_len. max_completion_tokens
// (OpenAI's current name) wins over max_tokens (its deprecated one) when both are given.
void parse_budget(const json& j, const admission_context& ctx, api_request& r) {
  std::size_t longest = 0;
  for (const auto& p : r.prompts) longest = std::max(longest, p.size());
  const auto prompt_len = static_cast<std::int64_t>(longest);
  const char* prompt_field = r.kind == endpoint::chat ? "messages" : "prompt";
  if (prompt_len >= ctx.max_model_len) throw too_long(ctx, prompt_len, prompt_field);
  const char* budget_key = j.contains("max_completion_tokens") ? "max_completion_tokens"
                           : j.contains("max_tokens")          ? "max_tokens"
                                                                : nullptr;
  if (budget_key) {
    const std::int64_t m = integer(j, budget_key, r.echo ? 0 : 1, INT32_MAX);
    if (prompt_len + m > ctx.max_model_len) {
      throw too_long(ctx, prompt_len, budget_key,
                     fmt::format(" and {} asks for {} more", budget_key, m));
    }
    r.max_tokens = static_cast<std::int32_t>(m);
  } else if (r.kind == endpoint::chat) {
    r.max_tokens = static_cast<std::int32_t>(ctx.max_model_len - prompt_len);
  } else {
    r.max_tokens = static_cast<std::int32_t>(std::min<std::int64_t>(16, ctx.max_model_len - prompt_len));
  }
  // vLLM's min_tokens: no end (EOS, a stop token id or string) before this many tokens.
  if (j.contains("min_tokens")) {
    const std::int64_t m = integer(j, "min_tokens", 0, INT32_MAX);
    if (m > r.max_tokens) {
      throw bad_field("min_tokens", fmt::format("must be at most {} ({}), got {}",
                                                budget_key ? budget_key : "max_tokens",
                                                r.max_tokens, m));
    }
    r.sampling.min_tokens = static_cast<std::int32_t>(m);
  }
}

// tools and tool_choice: forced calls (required, a named function) are held to a grammar of
// calls in the model's syntax; with auto, calls are read out of whatever the model writes.
void parse_tools(const ordered_json& oj, const admission_context& ctx, api_request& r) {
  r.tools = parse_tool_request(oj);
  const tool_choice_mode mode = r.tools.mode;
  if (mode == tool_choice_mode::none) return;
  if (mode == tool_choice_mode::automatic) {
    if (!ctx.read_tool_calls) return;
    r.read_tool_calls = ctx.tool_family;
    // Free text until the model starts a call, which the grammar then holds to a valid one
    // (not beside a structured-output field, which holds the whole output already).
    const std::string trigger = trigger_of(ctx.tool_family);
    if (trigger.empty() || r.grammar_to_compile || !ctx.grammars) return;
    pending_grammar triggered;
    triggered.out.spec = tool_call_spec(r.tools, ctx.tool_family, /*triggered=*/true);
    triggered.out.field = "tools";
    triggered.trigger = trigger;
    triggered.trigger_repeats = r.tools.parallel;
    r.grammar_to_compile = std::move(triggered);
    return;
  }
  if (r.grammar_to_compile) {
    throw bad_field("tool_choice",
                    "a forced tool call and a structured-output field cannot both hold "
                    "the output");
  }
  pending_grammar forced;
  forced.out.spec = tool_call_spec(r.tools, ctx.tool_family);
  forced.out.field = "tools";
  r.grammar_to_compile = std::move(forced);
  r.read_tool_calls = ctx.tool_family;
}

// Drops the members set to null: for every optional field, null means "not given".
template <class Json>
void drop_nulls(Json& j) {
  for (auto it = j.begin(); it != j.end();) {
    it = it->is_null() ? j.erase(it) : std::next(it);
  }
}

// The model asked for: the base, or one of its LoRA adapters.
void parse_model(const json& j, const admission_context& ctx, api_request& r) {
  if (!j.contains("model") || !j["model"].is_string())
    throw bad_field("model", "is required (a string)");
  r.model = j["model"].get<std::string>();
  require_served_model(r.model, ctx);
  if (r.model != ctx.model_name) r.adapter = r.model;
}

// How many choices, and whether and how they stream.
void parse_choices(const json& j, const admission_context& ctx, api_request& r) {
  if (j.contains("best_of") && integer(j, "best_of", 1, 1) != 1) {
    throw bad_field("best_of", "only 1 is supported");
  }
  if (j.contains("n")) {
    r.n = static_cast<std::int32_t>(integer(j, "n", 1, ctx.max_n, "server.max_n"));
  }
  if (j.contains("stream")) r.stream = boolean(j, "stream");
  if (j.contains("stream_options")) {
    const json& so = j["stream_options"];
    if (!so.is_object()) throw bad_field("stream_options", "expected an object");
    if (!r.stream) throw bad_field("stream_options", "is only allowed with stream: true");
    if (so.contains("include_usage") && !so["include_usage"].is_null()) {
      r.include_usage = boolean(so, "include_usage");
    }
  }
}

}  // namespace

void require_served_model(const std::string& model, const admission_context& ctx) {
  if (model == ctx.model_name || ctx.has_adapter(model)) return;
  // OpenAI's type for an unknown model, as GET /v1/models/{id} gives it.
  throw api_error(404,
                  fmt::format("the model '{}' does not exist; this server serves '{}'{}", model,
                              ctx.model_name,
                              ctx.adapters().empty() ? "" : " and its LoRA adapters"),
                  "model", "invalid_request_error", "model_not_found");
}

void require_tenant_model(const std::string& model, const admission_context& ctx,
                          const std::string& tenant) {
  if (may_use(ctx, tenant, model)) return;
  throw api_error(404, "the model '" + model + "' does not exist or this API key may not use it",
                  "model", "invalid_request_error", "model_not_found");
}

namespace {

// Fields with a meaning courier does not act on: a 400 naming each, never silence (their
// defaults change nothing and pass). vLLM refuses suffix too.
void refuse_unhonoured(const json& j, endpoint kind) {
  const auto given_not = [&](const char* key, const json& neutral) {
    return j.contains(key) && j[key] != neutral;
  };
  if (kind == endpoint::completions && given_not("suffix", "")) {
    throw bad_field("suffix", "is not supported: courier does not insert text between a prompt "
                              "and a suffix");
  }
  // The legacy form is served on /v1/chat/completions, translated to tools before this parser
  // (openai_functions.hpp): here it would be dropped.
  for (const char* legacy : {"functions", "function_call"}) {
    if (kind == endpoint::chat && j.contains(legacy)) {
      throw bad_field(legacy, "the legacy functions form is taken on /v1/chat/completions only");
    }
  }
}

}  // namespace

api_request parse_request_fields(endpoint kind, const std::string& body,
                                 const admission_context& ctx) {
  json j = parse_json_body(body, ctx.max_json_depth);
  drop_nulls(j);
  refuse_unhonoured(j, kind);
  const auto& own = kind == endpoint::chat ? chat_fields : completion_fields;
  api_request r;
  r.kind = kind;
  bool structured = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (is_structured_output_field(it.key())) {
      structured = true;
    } else if (!common_fields.count(it.key()) && !own.count(it.key())) {
      r.ignored_fields.push_back(it.key());
    }
  }
  parse_model(j, ctx, r);
  parse_choices(j, ctx, r);
  parse_sampling(j, ctx, r);
  if (j.contains("ignore_eos")) r.ignore_eos = boolean(j, "ignore_eos");
  if (j.contains("include_stop_str_in_output")) {
    r.include_stop_str_in_output = boolean(j, "include_stop_str_in_output");
  }
  if (j.contains("skip_special_tokens")) r.skip_special_tokens = boolean(j, "skip_special_tokens");
  if (j.contains("return_token_ids")) r.return_token_ids = boolean(j, "return_token_ids");
  parse_stop(j, ctx, r);

  if (kind == endpoint::completions) {
    parse_completion_prompt(j, ctx, r);
    if (j.contains("echo")) r.echo = boolean(j, "echo");
    if (j.contains("logprobs")) {
      r.logprobs = static_cast<std::int32_t>(integer(j, "logprobs", 0, 20));
    }
  }
  // The body in its own key order: chat templates and schemas see objects as the client wrote
  // them. Parsed only when needed.
  std::optional<ordered_json> oj;
  if (kind == endpoint::chat || structured) {
    oj = parse_ordered_json_body(body, ctx.max_json_depth);
    drop_nulls(*oj);
  }
  if (kind == endpoint::chat) {
    parse_chat_prompt(j, *oj, ctx, r);
    const bool want = j.contains("logprobs") && boolean(j, "logprobs");
    if (j.contains("top_logprobs")) {
      if (!want) throw bad_field("top_logprobs", "needs logprobs: true");
      r.logprobs = static_cast<std::int32_t>(integer(j, "top_logprobs", 0, 20));
    } else if (want) {
      r.logprobs = 0;
    }
  }
  const auto sequences = static_cast<std::int64_t>(r.prompts.size()) * r.n;
  if (sequences > ctx.max_sequences_per_request) {
    throw bad_field(r.prompts.size() > 1 ? "prompt" : "n",
              fmt::format("{} prompts x n = {} sequences; at most {} per request "
                          "(server.max_sequences_per_request)",
                          r.prompts.size(), sequences, ctx.max_sequences_per_request));
  }
  r.sampling.logprobs = r.logprobs;
  if (r.echo && r.logprobs >= 0) r.sampling.prompt_logprobs = r.logprobs;  // echo scores the prompt too
  parse_budget(j, ctx, r);
  if (structured) {
    if (auto out = find_structured_output(*oj, ctx.max_json_depth)) {
      r.grammar_to_compile = pending_grammar{std::move(*out), "", true};
    }
  }
  if (kind == endpoint::chat) parse_tools(*oj, ctx, r);
  return r;
}

void compile_request_grammar(api_request& r, const admission_context& ctx,
                             const std::string& tenant) {
  if (!r.grammar_to_compile) return;
  pending_grammar p = std::move(*r.grammar_to_compile);
  r.grammar_to_compile.reset();
  r.sampling.grammar =
      compile_structured_output(p.out, ctx.grammars.get(), grammar_scope(ctx, tenant));
  r.sampling.grammar.trigger = std::move(p.trigger);
  r.sampling.grammar.trigger_repeats = p.trigger_repeats;
}

api_request parse_api_request(endpoint kind, const std::string& body,
                              const admission_context& ctx, const std::string& tenant) {
  api_request r = parse_request_fields(kind, body, ctx);
  compile_request_grammar(r, ctx, tenant);
  return r;
}

}  // namespace courier::admission
