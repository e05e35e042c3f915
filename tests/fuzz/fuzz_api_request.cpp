// Fuzz target: parse_api_request on both endpoints, with the bundled tiny-qwen3's tokenizer and
// chat template, as the server holds them. Each input is one request body, tried on
// /v1/completions and on /v1/chat/completions.
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

#include "actors/admission/api_request.hpp"
#include "actors/admission/api_response.hpp"
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

void run(admission::endpoint kind, const std::string& body) {
  try {
    check_parsed(kind, admission::parse_api_request(kind, body, *ctx));
  } catch (const admission::api_error& e) {
    if (e.status != 400 && e.status != 404) {
      finding(std::string(name(kind)) + ": api_error with status " + std::to_string(e.status));
    }
    // What the request actor sends; it must not throw (the message may quote invalid UTF-8).
    try {
      (void)admission::wire(e.to_json());
    } catch (...) {
      courier::fuzz::undocumented_exception("wire(api_error::to_json())");
    }
  } catch (...) {
    courier::fuzz::undocumented_exception(name(kind));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ctx = load_context();
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  run(admission::endpoint::completions, body);
  run(admission::endpoint::chat, body);
  return 0;
}
