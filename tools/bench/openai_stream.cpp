#include "tools/bench/openai_stream.hpp"

#include <nlohmann/json.hpp>

namespace courier::bench_tool {
namespace {

using json = nlohmann::json;

std::int64_t int_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string string_at(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string describe_error(const json& e) {
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object()) {
    if (std::string m = string_at(e, "message"); !m.empty()) return m;
  }
  return e.dump();
}

}  // namespace

api_kind api_for_endpoint(std::string_view endpoint) {
  constexpr std::string_view chat = "chat/completions";
  const bool is_chat =
      endpoint.size() >= chat.size() && endpoint.substr(endpoint.size() - chat.size()) == chat;
  return is_chat ? api_kind::chat : api_kind::completions;
}

stream_item parse_stream_data(std::string_view data, api_kind api) {
  stream_item item;
  if (data == "[DONE]") {
    item.done = true;
    return item;
  }
  const json j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    item.error = "malformed stream data: " + std::string(data.substr(0, 200));
    return item;
  }
  if (const auto e = j.find("error"); e != j.end() && !e->is_null()) {
    item.error = describe_error(*e);
    return item;
  }
  if (const auto c = j.find("choices"); c != j.end() && c->is_array() && !c->empty()) {
    item.content = true;
    const json& first = (*c)[0];
    if (api == api_kind::chat) {
      if (const auto d = first.find("delta"); d != first.end() && d->is_object()) {
        item.text = string_at(*d, "content");
      }
    } else {
      item.text = string_at(first, "text");
    }
    if (const auto t = first.find("token_ids"); t != first.end() && t->is_array()) {
      for (const json& id : *t) {
        if (id.is_number_integer()) item.token_ids.push_back(id.get<std::int64_t>());
      }
    }
  }
  if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
    usage_counts counts;
    counts.prompt_tokens = int_field(*u, "prompt_tokens");
    counts.completion_tokens = int_field(*u, "completion_tokens");
    if (const auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object()) {
      counts.cached_tokens = int_field(*d, "cached_tokens");
    }
    item.usage = counts;
  }
  return item;
}

std::string error_message(std::string_view body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    if (const auto e = j.find("error"); e != j.end()) return describe_error(*e);
    if (std::string m = string_at(j, "message"); !m.empty()) return m;
  }
  return std::string(body.substr(0, 200));
}

std::string request_body(const bench_request& r, const body_params& p, api_kind api) {
  json j = {{"model", r.model.empty() ? p.model : r.model},
            {"temperature", p.temperature},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}},
            {"ignore_eos", p.ignore_eos}};
  if (p.return_token_ids) j["return_token_ids"] = true;
  if (!p.extra_body.empty()) {
    const json extra = json::parse(p.extra_body);
    for (const auto& [key, value] : extra.items()) j[key] = value;
  }
  if (api == api_kind::chat) {
    std::string text = r.prompt_text;
    if (text.empty()) {
      for (std::size_t i = 0; i < r.prompt_ids.size(); ++i) {
        if (i > 0) text += ' ';
        text += std::to_string(r.prompt_ids[i]);
      }
    }
    j["messages"] = json::array({{{"role", "user"}, {"content", text}}});
    j["max_completion_tokens"] = r.output_len;
  } else {
    j["prompt"] = r.prompt_text.empty() ? json(r.prompt_ids) : json(r.prompt_text);
    j["max_tokens"] = r.output_len;
  }
  // Replace: random ids decode to invalid UTF-8 only through a tokenizer bug, but a body that
  // fails to serialise must not abort the run.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<std::string> first_model_id(std::string_view body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto d = j.find("data");
  if (d == j.end() || !d->is_array() || d->empty() || !(*d)[0].is_object()) return std::nullopt;
  std::string id = string_at((*d)[0], "id");
  if (id.empty()) return std::nullopt;
  return id;
}

}  // namespace courier::bench_tool
