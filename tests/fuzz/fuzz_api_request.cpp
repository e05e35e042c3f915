// Fuzz target: parse_api_request on both endpoints, with the bundled tiny-qwen3's tokenizer and
// chat template, as the server holds them. Each input is one request body, tried on
// /v1/completions and on /v1/chat/completions, as an Anthropic Messages body and as a Responses
// body (translated by chat_body_of, the Responses one against a response store that keeps one
// response and its items, then parsed as the chat body they became), and as an embeddings body.
//
// Allowed: a parsed request that keeps the limits below, or an api_error with status 400 or 404
// whose JSON the server can send. A finding: any other exception, a broken limit, a crash, a
// sanitizer report, a hang, or memory past libFuzzer's -rss_limit_mb.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/admission/api_format.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/api_response.hpp"
#include "actors/admission/embedding_request.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "text/jinja/template_source.hpp"

namespace {

using courier::fuzz::finding;
namespace admission = courier::admission;
namespace text = courier::text;

// Owned for the whole process (libFuzzer never returns from its loop).
admission::admission_context* ctx = nullptr;

// As the server fills its context: limits from the model's config.json, the tokenizer and chat
// template from the model folder (admission_server.cpp, load_text_assets).
admission::admission_context* load_context() {
  auto* c = new admission::admission_context;
  const std::string dir = courier::fuzz::data_path("models/tiny-qwen3");
  const auto config = nlohmann::json::parse(courier::fuzz::read_file(dir + "/config.json"));
  c->model_name = "tiny-qwen3";
  c->max_model_len = config.at("max_position_embeddings").get<std::int64_t>();
  c->vocab_size = config.at("vocab_size").get<std::int32_t>();
  c->tok = std::make_shared<const text::tokenizer>(text::tokenizer::load(dir + "/tokenizer.json"));
  const auto tc = nlohmann::ordered_json::parse(courier::fuzz::read_file(dir + "/tokenizer_config.json"));
  c->chat = std::make_shared<const text::jinja::chat_template>(
      text::jinja::chat_template::parse(text::jinja::chat_template_from_config(tc)));
  c->bos_token = text::jinja::special_token_from_config(tc, "bos_token").value_or("");
  c->eos_token = text::jinja::special_token_from_config(tc, "eos_token").value_or("");
  return c;
}

const char* name(admission::endpoint kind) {
  return kind == admission::endpoint::chat ? "chat" : "completions";
}

// The limits a parsed request promises the request actor and the scheduler.
void check_parsed(admission::endpoint kind, const admission::api_request& r) {
  const std::string where = std::string(name(kind)) + ": parsed request ";
  if (r.kind != kind) finding(where + "has the other endpoint's kind");
  if (r.prompts.empty() || r.prompts.size() > 64) finding(where + "has no prompt or more than 64");
  if (kind == admission::endpoint::chat && r.prompts.size() != 1) finding(where + "has several prompts");
  std::size_t longest = 0;
  for (const auto& p : r.prompts) {
    if (kind == admission::endpoint::completions && p.empty()) finding(where + "has an empty prompt");
    for (auto id : p) {
      if (id >= static_cast<std::uint32_t>(ctx->vocab_size)) finding(where + "has a token id past the vocabulary");
    }
    longest = std::max(longest, p.size());
  }
  for (auto id : r.stop_token_ids) {
    if (id >= static_cast<std::uint32_t>(ctx->vocab_size)) finding(where + "has a stop token id past the vocabulary");
  }
  if (r.n < 1 || r.n > ctx->max_n) finding(where + "has n out of [1, max_n]");
  if (r.max_tokens < (r.echo ? 0 : 1)) finding(where + "has max_tokens below its minimum");
  if (static_cast<std::int64_t>(longest) + r.max_tokens > ctx->max_model_len) {
    finding(where + "does not fit max_model_len");
  }
  if (r.logprobs < -1 || r.logprobs > 20) finding(where + "has logprobs out of [-1, 20]");
  if (r.stop.size() > 16) finding(where + "has more than 16 stop strings");
  if (r.include_usage && !r.stream) finding(where + "has include_usage without stream");
}

// An api_error is allowed when it is a 400 or 404 whose JSON the server can send.
void check_error(const char* where, const admission::api_error& e) {
  if (e.status != 400 && e.status != 404) {
    finding(std::string(where) + ": api_error with status " + std::to_string(e.status));
  }
  // What the request actor sends; it must not throw (the message may quote invalid UTF-8).
  try {
    (void)admission::wire(e.to_json());
  } catch (...) {
    courier::fuzz::undocumented_exception("wire(api_error::to_json())");
  }
}

void run(admission::endpoint kind, const std::string& body) {
  try {
    check_parsed(kind, admission::parse_api_request(kind, body, *ctx));
  } catch (const admission::api_error& e) {
    check_error(name(kind), e);
  } catch (...) {
    courier::fuzz::undocumented_exception(name(kind));
  }
}

// The way an Anthropic or Responses body goes: translated, then parsed as the chat body.
void run_translated(admission::api_format format, const char* where, const std::string& body) {
  try {
    admission::client_body client;
    const std::string chat =
        admission::chat_body_of(format, true, body, ctx->max_json_depth, ctx->responses, "t", client);
    check_parsed(admission::endpoint::chat,
                 admission::parse_api_request(admission::endpoint::chat, chat, *ctx));
  } catch (const admission::api_error& e) {
    check_error(where, e);
  } catch (...) {
    courier::fuzz::undocumented_exception(where);
  }
}

void run_embeddings(const std::string& body) {
  try {
    const admission::embedding_request r = admission::parse_embedding_request(body, *ctx, "t");
    if (r.inputs.empty() || r.inputs.size() > admission::max_embedding_inputs) {
      finding("embeddings: no input, or more than max_embedding_inputs");
    }
    for (const auto& in : r.inputs) {
      if (in.empty() || static_cast<std::int64_t>(in.size()) >= ctx->max_model_len) {
        finding("embeddings: an input empty or not shorter than max_model_len");
      }
      for (auto id : in) {
        if (id >= static_cast<std::uint32_t>(ctx->vocab_size)) finding("embeddings: a token id past the vocabulary");
      }
    }
  } catch (const admission::api_error& e) {
    check_error("embeddings", e);
  } catch (...) {
    courier::fuzz::undocumented_exception("embeddings");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ctx = load_context();
  // One kept response (a message and a call) that previous_response_id and item_reference may
  // name: resp_seed, msg_seed, fc_seed.
  ctx->responses = std::make_shared<admission::response_store>(1 << 20, 3600 * 1000);
  ctx->responses->keep(
      "t",
      nlohmann::ordered_json::parse(R"({"id": "resp_seed", "object": "response", "output": [
          {"type": "message", "id": "msg_seed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hello."}]},
          {"type": "function_call", "id": "fc_seed", "call_id": "call_seed", "name": "f",
           "arguments": "{}"}]})"),
      nlohmann::ordered_json::parse(R"([{"type": "message", "role": "user", "content": "Hi"}])"));
  ctx->hidden_size = 64;
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  run(admission::endpoint::completions, body);
  run(admission::endpoint::chat, body);
  run_translated(admission::api_format::anthropic, "anthropic", body);
  run_translated(admission::api_format::responses, "responses", body);
  run_embeddings(body);
  return 0;
}
