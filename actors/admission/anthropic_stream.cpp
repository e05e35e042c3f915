#include "actors/admission/anthropic_messages.hpp"

#include "actors/admission/anthropic_internal.hpp"
#include "actors/admission/api_translate.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// A stream's error chunk has no status: its OpenAI type says which it would have been.
int status_of(const std::string& openai_type) {
  if (openai_type == "invalid_request_error") return 400;
  return openai_type == "server_overloaded" ? 503 : 500;
}

}  // namespace

anthropic_stream::anthropic_stream(const std::string& chat_id, std::string model,
                                   std::int64_t prompt_tokens)
    : id_("msg_" + id_suffix(chat_id)), model_(std::move(model)), prompt_tokens_(prompt_tokens) {}

void anthropic_stream::start(std::string& out) {
  if (started_) return;
  started_ = true;
  const ordered_json usage = {{"input_tokens", prompt_tokens_},
                              {"cache_creation_input_tokens", 0},
                              {"cache_read_input_tokens", 0},
                              {"output_tokens", 0}};
  out += sse_event({{"type", "message_start"},
                    {"message",
                     {{"id", id_},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", model_},
                      {"content", ordered_json::array()},
                      {"stop_reason", nullptr},
                      {"stop_sequence", nullptr},
                      {"usage", usage}}}});
}

void anthropic_stream::open(block kind, ordered_json content_block, std::string& out) {
  close(out);
  out += sse_event({{"type", "content_block_start"},
                    {"index", next_index_},
                    {"content_block", std::move(content_block)}});
  open_ = kind;
  ++next_index_;
}

void anthropic_stream::close(std::string& out) {
  if (open_ == block::none) return;
  out += sse_event({{"type", "content_block_stop"}, {"index", next_index_ - 1}});
  open_ = block::none;
}

std::string anthropic_stream::on_chunk(const json& chunk) {
  std::string out;
  if (ended_) return out;
  if (const json& e = member(chunk, "error"); !e.is_null()) {
    ended_ = true;
    out += sse_event(
        {{"type", "error"},
         {"error",
          {{"type", error_type(status_of(str(e, "type")))}, {"message", str(e, "message")}}}});
    return out;
  }
  start(out);
  if (const json& u = member(chunk, "usage"); u.is_object()) usage_ = u;
  const auto delta = [&](std::int64_t index, ordered_json d) {
    out += sse_event({{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(d)}});
  };
  const json& choices = member(chunk, "choices");
  for (const json& choice : choices.is_array() ? choices : json::array()) {
    if (count(choice, "index") != 0) continue;  // one choice: these APIs have no n
    const json& d = member(choice, "delta");
    if (const std::string& r = str(d, "reasoning_content"); !r.empty()) {
      if (open_ != block::thinking) {
        open(block::thinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, out);
      }
      delta(next_index_ - 1, {{"type", "thinking_delta"}, {"thinking", r}});
    }
    if (const std::string& text = str(d, "content"); !text.empty()) {
      if (open_ != block::text) open(block::text, {{"type", "text"}, {"text", ""}}, out);
      delta(next_index_ - 1, {{"type", "text_delta"}, {"text", text}});
    }
    const json& calls = member(d, "tool_calls");
    for (const json& tc : calls.is_array() ? calls : json::array()) {
      const json& fn = member(tc, "function");
      auto it = call_blocks_.find(count(tc, "index"));
      if (it == call_blocks_.end()) {  // a call's first delta: its id and name
        open(block::tool_use,
             {{"type", "tool_use"},
              {"id", tool_use_id(str(tc, "id"))},
              {"name", str(fn, "name")},
              {"input", ordered_json::object()}},
             out);
        it = call_blocks_.emplace(count(tc, "index"), next_index_ - 1).first;
      }
      if (const std::string& args = str(fn, "arguments"); !args.empty()) {
        delta(it->second, {{"type", "input_json_delta"}, {"partial_json", args}});
      }
    }
    if (const std::string& f = str(choice, "finish_reason"); !f.empty()) {
      finish_reason_ = f;
      close(out);
    }
  }
  return out;
}

std::string anthropic_stream::finish(const std::optional<std::string>& matched_stop) {
  std::string out;
  if (ended_) return out;
  ended_ = true;
  start(out);
  close(out);
  const std::string reason =
      stop_reason(finish_reason_, !call_blocks_.empty(), matched_stop.has_value());
  out += sse_event(
      {{"type", "message_delta"},
       {"delta", {{"stop_reason", reason}, {"stop_sequence", stop_sequence(reason, matched_stop)}}},
       {"usage", anthropic_usage(usage_)}});
  out += sse_event({{"type", "message_stop"}});
  return out;
}

}  // namespace courier::admission
