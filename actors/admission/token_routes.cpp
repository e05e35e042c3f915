#include "actors/admission/token_routes.hpp"

#include <nlohmann/json.hpp>

#include <vector>

#include "actors/admission/anthropic_messages.hpp"
#include "actors/admission/api_format.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/api_response.hpp"
#include "actors/admission/http_errors.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {
namespace {

using nlohmann::json;

// The model a body names, which need not be given (vLLM's routes take it as optional); when
// it is, it must be one this server serves, as on every other route.
std::string model_of(const json& j, const admission_context& ctx) {
  if (!j.is_object() || !j.contains("model") || j["model"].is_null()) return ctx.model_name;
  if (!j["model"].is_string()) throw api_error(400, "'model': expected a string", "model");
  require_served_model(j["model"].get<std::string>(), ctx);
  return j["model"].get<std::string>();
}

// What a chat request renders its prompt from, besides its messages: the count is the one that
// request gets (a client budgeting its context with tools counts the tool block too).
constexpr const char* rendering_fields[] = {"tools", "chat_template_kwargs",
                                            "add_generation_prompt", "continue_final_message"};

json tokenize_body(const admission_context& ctx, const std::string& body) {
  const json j = parse_json_body(body, ctx.max_json_depth);
  const std::string model = model_of(j, ctx);
  if (!ctx.tok) throw api_error(400, "this model has no tokenizer");
  std::vector<text::token_id> ids;
  if (j.contains("messages")) {
    // Rendered as a chat request would be (key order kept for the template).
    const auto oj = parse_ordered_json_body(body, ctx.max_json_depth);
    nlohmann::ordered_json chat = {{"model", model}, {"messages", oj["messages"]},
                                   {"max_tokens", 1}};
    for (const char* field : rendering_fields) {
      if (oj.contains(field)) chat[field] = oj[field];
    }
    ids = parse_api_request(endpoint::chat, chat.dump(), ctx).prompts.at(0);
  } else if (j.contains("prompt") && j["prompt"].is_string()) {
    const bool special = !j.contains("add_special_tokens") || j["add_special_tokens"] == true;
    ids = ctx.tok->encode(j["prompt"].get<std::string>(), special);
  } else {
    throw api_error(400, "'prompt': expected a string (or 'messages')", "prompt");
  }
  return {{"count", ids.size()}, {"max_model_len", ctx.max_model_len}, {"tokens", ids}};
}

json detokenize_body(const admission_context& ctx, const std::string& body) {
  const json j = parse_json_body(body, ctx.max_json_depth);
  model_of(j, ctx);
  if (!ctx.tok) throw api_error(400, "this model has no tokenizer");
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) {
    throw api_error(400, "'tokens': expected a list of token ids", "tokens");
  }
  std::vector<text::token_id> ids;
  for (const json& t : j["tokens"]) {
    if (!t.is_number_integer() || t.get<std::int64_t>() < 0 ||
        t.get<std::int64_t>() >= ctx.vocab_size) {
      throw api_error(400, "'tokens': token ids must be integers in the vocabulary", "tokens");
    }
    ids.push_back(t.get<text::token_id>());
  }
  return {{"prompt", ctx.tok->decode(ids)}};
}

// The prompt's length as /v1/messages would render and tokenize it (no grammar is compiled).
json count_tokens_body(const admission_context& ctx, const std::string& body) {
  nlohmann::ordered_json b = parse_ordered_json_body(body, ctx.max_json_depth);
  if (!b.is_object()) throw api_error(400, "the body must be a JSON object");
  b["max_tokens"] = 1;  // not a field of count_tokens; the translation to chat wants one
  const api_request r =
      parse_request_fields(endpoint::chat, anthropic_to_chat_request(b).dump(), ctx);
  return {{"input_tokens", r.prompts.at(0).size()}};
}

}  // namespace

void answer_token_route(const admission_context& ctx, token_route route, const std::string& body,
                        http::response_writer& out) {
  if (out.disconnected()) return;  // nobody is waiting for it
  const api_format shape =
      route == token_route::count_tokens ? api_format::anthropic : api_format::openai;
  try {
    const json result = route == token_route::tokenize     ? tokenize_body(ctx, body)
                        : route == token_route::detokenize ? detokenize_body(ctx, body)
                                                           : count_tokens_body(ctx, body);
    out.send(200, "application/json", wire(result));
  } catch (const api_error& e) {
    send_api_error(out, e, shape);
  } catch (const std::exception& e) {
    send_api_error(out, api_error(500, std::string("internal error: ") + e.what(), "",
                                  "server_error"), shape);
  }
}

}  // namespace courier::admission
