#include "actors/admission/api_response.hpp"

#include <fmt/format.h>

#include <random>

namespace courier::admission {

using nlohmann::json;

std::string response_id(const std::string& prefix) {
  // One generator per thread, seeded from the OS: request actors run on any CAF worker.
  thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }()};
  const std::uint64_t hi = gen(), lo = gen();
  return fmt::format("{}{:08x}{:016x}", prefix, static_cast<std::uint32_t>(hi), lo);
}

namespace {

// A token as text: its decode, or "token_id:N" without a tokenizer (as vLLM prints them).
std::string token_text(const text::tokenizer* tok, msg::token_id id) {
  if (!tok) return "token_id:" + std::to_string(id);
  return tok->decode(&id, 1);
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

// Completions: {tokens, token_logprobs, top_logprobs, text_offset}; with echo, the prompt's
// tokens first (the very first with null logprobs, as OpenAI and vLLM write it).
json completion_logprobs(const choice_output& c, const text::tokenizer* tok,
                         std::size_t text_offset) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  if (c.prompt_first) {
    const std::string t = token_text(tok, *c.prompt_first);
    tokens.push_back(t);
    token_lps.push_back(nullptr);
    tops.push_back(nullptr);
    offsets.push_back(text_offset);
    text_offset += t.size();
  }
  std::vector<const msg::token_logprob*> all;
  for (const auto& lp : c.prompt_logprobs) all.push_back(&lp);
  for (const auto& lp : c.logprobs) all.push_back(&lp);
  for (const msg::token_logprob* p : all) {
    const msg::token_logprob& lp = *p;
    const std::string t = token_text(tok, lp.token);
    tokens.push_back(t);
    token_lps.push_back(lp.logprob);
    json top = json::object();
    for (std::size_t i = 0; i < lp.top_ids.size(); ++i) {
      top[token_text(tok, lp.top_ids[i])] = lp.top_logprobs[i];
    }
    tops.push_back(top);
    offsets.push_back(text_offset);
    text_offset += t.size();
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

// Chat: {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
json chat_logprobs(const std::vector<msg::token_logprob>& lps, const text::tokenizer* tok) {
  json content = json::array();
  for (const auto& lp : lps) {
    const std::string t = token_text(tok, lp.token);
    json top = json::array();
    for (std::size_t i = 0; i < lp.top_ids.size(); ++i) {
      const std::string a = token_text(tok, lp.top_ids[i]);
      top.push_back({{"token", a}, {"logprob", lp.top_logprobs[i]}, {"bytes", bytes_of(a)}});
    }
    content.push_back(
        {{"token", t}, {"logprob", lp.logprob}, {"bytes", bytes_of(t)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json finish_json(const std::string& f) { return f.empty() ? json(nullptr) : json(f); }

json tool_calls_json(const std::vector<tool_call_piece>& calls, bool chunk) {
  json out = json::array();
  for (const tool_call_piece& p : calls) {
    json f = {{"arguments", p.arguments}};
    if (!p.name.empty()) f["name"] = p.name;
    json c = json::object();
    if (chunk) c["index"] = p.index;
    if (!p.id.empty()) {
      c["id"] = p.id;
      c["type"] = "function";
    }
    c["function"] = std::move(f);
    out.push_back(std::move(c));
  }
  return out;
}

json choice_json(const api_request& r, const choice_output& c, const text::tokenizer* tok,
                 bool chunk, bool first) {
  json j = {{"index", c.index}};
  const bool want_lp = r.logprobs >= 0;
  if (r.kind == endpoint::completions) {
    j["text"] = c.text;
    j["logprobs"] = want_lp ? completion_logprobs(c, tok, 0) : json(nullptr);
  } else if (chunk) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!c.reasoning.empty()) delta["reasoning_content"] = c.reasoning;
    if (!c.text.empty() || (first && c.reasoning.empty() && c.tool_calls.empty())) {
      delta["content"] = c.text;
    }
    if (!c.tool_calls.empty()) delta["tool_calls"] = tool_calls_json(c.tool_calls, true);
    j["delta"] = delta;
    j["logprobs"] = want_lp && !c.logprobs.empty() ? chat_logprobs(c.logprobs, tok) : json(nullptr);
  } else {
    j["message"] = {{"role", "assistant"},
                    {"content", c.text.empty() && !c.tool_calls.empty() ? json(nullptr) : json(c.text)}};
    if (!c.reasoning.empty()) j["message"]["reasoning_content"] = c.reasoning;
    if (!c.tool_calls.empty()) j["message"]["tool_calls"] = tool_calls_json(c.tool_calls, false);
    j["logprobs"] = want_lp ? chat_logprobs(c.logprobs, tok) : json(nullptr);
  }
  j["finish_reason"] = finish_json(c.finish_reason);
  if (r.return_token_ids || !tok) j["token_ids"] = c.token_ids;
  return j;
}

const char* object_name(const api_request& r, bool chunk) {
  if (r.kind == endpoint::completions) return "text_completion";
  return chunk ? "chat.completion.chunk" : "chat.completion";
}

}  // namespace

json usage_json(const usage_totals& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json full_response(const api_request& r, const response_header& h,
                   const std::vector<choice_output>& choices, const usage_totals& u,
                   const text::tokenizer* tok) {
  json cs = json::array();
  for (const auto& c : choices) cs.push_back(choice_json(r, c, tok, false, false));
  return {{"id", h.id},       {"object", object_name(r, false)}, {"created", h.created},
          {"model", h.model}, {"choices", cs},                    {"usage", usage_json(u)}};
}

json stream_chunk(const api_request& r, const response_header& h, const choice_output& delta,
                  bool first, const text::tokenizer* tok) {
  return {{"id", h.id},
          {"object", object_name(r, true)},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array({choice_json(r, delta, tok, true, first)})}};
}

json usage_chunk(const api_request& r, const response_header& h, const usage_totals& u) {
  return {{"id", h.id},          {"object", object_name(r, true)}, {"created", h.created},
          {"model", h.model},    {"choices", json::array()},       {"usage", usage_json(u)}};
}

std::string wire(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string sse(const json& j) { return "data: " + wire(j) + "\n\n"; }

}  // namespace courier::admission
