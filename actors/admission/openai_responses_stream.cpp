#include "actors/admission/openai_responses.hpp"

#include "actors/admission/api_translate.hpp"
#include "actors/admission/openai_responses_internal.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::json;
using nlohmann::ordered_json;

responses_stream::responses_stream(const std::string& chat_id, std::int64_t created,
                                   std::string model, ordered_json request)
    : key_(id_suffix(chat_id)),
      created_(created),
      model_(std::move(model)),
      request_(std::move(request)) {}

std::string responses_stream::event(ordered_json e) {
  e["sequence_number"] = sequence_++;
  return sse_event(e);
}

ordered_json responses_stream::response(const std::string& status) const {
  return response_json(key_, created_, model_, status, items_,
                       status == "in_progress" ? ordered_json(nullptr) : responses_usage(usage_),
                       request_);
}

void responses_stream::start(std::string& out) {
  if (started_) return;
  started_ = true;
  out += event({{"type", "response.created"}, {"response", response("in_progress")}});
  out += event({{"type", "response.in_progress"}, {"response", response("in_progress")}});
}

void responses_stream::open(item it, std::string& out) {
  close("completed", out);
  // A second message or reasoning item (text after a call) needs an id of its own.
  for (const item& other : items_) {
    if (other.id == it.id) it.id += "_" + std::to_string(items_.size());
  }
  items_.push_back(std::move(it));
  open_ = true;
  const item& added = items_.back();
  const std::size_t index = items_.size() - 1;
  out += event({{"type", "response.output_item.added"},
                {"output_index", index},
                {"item", item_json(added, true)}});
  if (added.kind == item_kind::function_call) return;
  out += event({{"type", "response.content_part.added"},
                {"item_id", added.id},
                {"output_index", index},
                {"content_index", 0},
                {"part", added.kind == item_kind::message ? output_text("") : reasoning_text("")}});
}

void responses_stream::close(const char* status, std::string& out) {
  if (!open_) return;
  open_ = false;
  item& it = items_.back();
  it.status = status;
  const std::size_t index = items_.size() - 1;
  if (it.kind == item_kind::function_call) {
    out += event({{"type", "response.function_call_arguments.done"},
                  {"item_id", it.id},
                  {"output_index", index},
                  {"name", it.name},
                  {"arguments", it.text}});
  } else {
    const bool message = it.kind == item_kind::message;
    ordered_json done = {
        {"type", message ? "response.output_text.done" : "response.reasoning_text.done"},
        {"item_id", it.id},
        {"output_index", index},
        {"content_index", 0},
        {"text", it.text}};
    if (message) done["logprobs"] = ordered_json::array();
    out += event(std::move(done));
    out += event({{"type", "response.content_part.done"},
                  {"item_id", it.id},
                  {"output_index", index},
                  {"content_index", 0},
                  {"part", message ? output_text(it.text) : reasoning_text(it.text)}});
  }
  out += event({{"type", "response.output_item.done"},
                {"output_index", index},
                {"item", item_json(it, false)}});
}

std::string responses_stream::on_chunk(const json& chunk) {
  std::string out;
  if (ended_) return out;
  if (const json& e = member(chunk, "error"); !e.is_null()) {
    ended_ = true;
    const std::string& code = str(e, "code");
    const std::string& param = str(e, "param");
    out += event({{"type", "error"},
                  {"code", code.empty() ? str(e, "type") : code},
                  {"message", str(e, "message")},
                  {"param", param.empty() ? ordered_json(nullptr) : ordered_json(param)}});
    return out;
  }
  start(out);
  if (const json& u = member(chunk, "usage"); u.is_object()) usage_ = u;
  // Text for the open item of `kind`, opening one (with `id`) unless that is the open one.
  const auto append = [&](item_kind kind, const std::string& id, const std::string& piece,
                          const char* type) {
    if (!open_ || items_.back().kind != kind) open({kind, id, "", "", ""}, out);
    items_.back().text += piece;
    ordered_json d = {{"type", type},
                      {"item_id", items_.back().id},
                      {"output_index", items_.size() - 1},
                      {"content_index", 0},
                      {"delta", piece}};
    if (kind == item_kind::message) d["logprobs"] = ordered_json::array();
    out += event(std::move(d));
  };
  const json& choices = member(chunk, "choices");
  for (const json& choice : choices.is_array() ? choices : json::array()) {
    if (count(choice, "index") != 0) continue;  // one choice: the API has no n
    const json& d = member(choice, "delta");
    if (const std::string& r = str(d, "reasoning_content"); !r.empty()) {
      append(item_kind::reasoning, "rs_" + key_, r, "response.reasoning_text.delta");
    }
    if (const std::string& text = str(d, "content"); !text.empty()) {
      append(item_kind::message, "msg_" + key_, text, "response.output_text.delta");
    }
    const json& calls = member(d, "tool_calls");
    for (const json& tc : calls.is_array() ? calls : json::array()) {
      const json& fn = member(tc, "function");
      auto at = calls_.find(count(tc, "index"));
      if (at == calls_.end()) {  // a call's first delta: its id and name
        const std::string& call_id = str(tc, "id");
        open({item_kind::function_call, call_item_id(call_id), "", call_id, str(fn, "name")}, out);
        at = calls_.emplace(count(tc, "index"), items_.size() - 1).first;
      }
      if (const std::string& args = str(fn, "arguments"); !args.empty()) {
        items_[at->second].text += args;
        out += event({{"type", "response.function_call_arguments.delta"},
                      {"item_id", items_[at->second].id},
                      {"output_index", at->second},
                      {"delta", args}});
      }
    }
    if (const std::string& f = str(choice, "finish_reason"); !f.empty()) {
      finish_reason_ = f;
      close(response_status(f), out);
    }
  }
  return out;
}

std::string responses_stream::finish() {
  std::string out;
  if (ended_) return out;
  ended_ = true;
  start(out);
  const bool incomplete = finish_reason_ == "length";
  close(response_status(finish_reason_), out);
  completed_ = response(response_status(finish_reason_));
  out += event({{"type", incomplete ? "response.incomplete" : "response.completed"},
                {"response", *completed_}});
  return out;
}

}  // namespace courier::admission
