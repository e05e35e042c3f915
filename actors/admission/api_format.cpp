#include "actors/admission/api_format.hpp"

#include <utility>
#include <vector>

#include "actors/admission/api_response.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

namespace {

nlohmann::ordered_json responses_chat_body(const std::shared_ptr<response_store>& store,
                                           const std::string& tenant, client_body& client) {
  nlohmann::ordered_json& body = client.original;
  stored_responses kept;
  if (store) {
    kept.continued = [&](const std::string& id) { return store->continued(tenant, id); };
    kept.item = [&](const std::string& id) { return store->item(tenant, id); };
  }
  responses_input input = responses_conversation(body, store ? &kept : nullptr);
  nlohmann::ordered_json chat = responses_to_chat_request(body, input);
  // OpenAI keeps a response unless the request says `store: false` (a boolean: checked above).
  const bool keep = store && (!body.contains("store") || body["store"] == true);
  body["store"] = keep;  // echoed: whether this response is kept
  if (keep) {
    client.keep = [store, tenant, items = std::move(input.items)](
                      const nlohmann::ordered_json& response) {
      store->keep(tenant, response, items);
    };
  }
  return chat;
}

}  // namespace

std::string chat_body_of(api_format& f, bool chat, const std::string& body, int max_json_depth,
                         const std::shared_ptr<response_store>& store, const std::string& tenant,
                         client_body& client) {
  const auto dump = [](const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  nlohmann::ordered_json& original = client.original;
  if (f == api_format::openai) {
    // Parsed here only when it may be the legacy form (the chat parser reads it anyway).
    if (!chat || (body.find("\"functions\"") == std::string::npos &&
                  body.find("\"function_call\"") == std::string::npos)) {
      return body;
    }
    original = parse_ordered_json_body(body, max_json_depth);
    if (!uses_legacy_functions(original)) return body;
    f = api_format::openai_functions;
    return dump(legacy_functions_to_tools(original));
  }
  original = parse_ordered_json_body(body, max_json_depth);
  return dump(f == api_format::anthropic ? anthropic_to_chat_request(original)
                                         : responses_chat_body(store, tenant, client));
}

std::string client_field(api_format f, const std::string& param) {
  // The chat fields a translation writes under another name, longest first.
  using names = std::vector<std::pair<std::string, std::string>>;
  static const names anthropic = {
      {"response_format.json_schema.schema", "output_config.format.schema"},
      {"response_format", "output_config.format"},
      {"stop", "stop_sequences"}};
  static const names responses = {{"response_format.json_schema.schema", "text.format.schema"},
                                  {"response_format", "text.format"},
                                  {"max_tokens", "max_output_tokens"}};
  static const names functions = {{"tools", "functions"}, {"tool_choice", "function_call"}};
  const names* table = f == api_format::anthropic          ? &anthropic
                       : f == api_format::responses        ? &responses
                       : f == api_format::openai_functions ? &functions
                                                           : nullptr;
  if (!table) return param;
  for (const auto& [chat, theirs] : *table) {
    if (param.compare(0, chat.size(), chat) != 0) continue;
    const char next = param.size() > chat.size() ? param[chat.size()] : '\0';
    if (next == '\0' || next == '.' || next == '[') return theirs + param.substr(chat.size());
  }
  return param;
}

nlohmann::json error_body(api_format f, const api_error& e, const std::string& request_id) {
  const std::string field = client_field(f, e.param);
  if (field != e.param) {  // the message starts with the field it names (bad_field's form)
    std::string message = e.what();
    const std::string quoted = "'" + e.param + "'";
    if (message.compare(0, quoted.size(), quoted) == 0) {
      message.replace(0, quoted.size(), "'" + field + "'");
    }
    return error_body(f, api_error(e.status, message, field, e.type, e.code), request_id);
  }
  if (f != api_format::anthropic) return e.to_json();
  nlohmann::json body = anthropic_error(e.status, e.to_json());
  if (!request_id.empty()) body["request_id"] = request_id;
  return body;
}

format_writer::format_writer(api_format f, const std::string& id, std::int64_t created,
                             const std::string& model, std::int64_t prompt_tokens,
                             client_body client)
    : format_(f), client_(std::move(client)) {
  if (f == api_format::anthropic) anthropic_.emplace(id, model, prompt_tokens);
  if (f == api_format::responses) responses_.emplace(id, created, model, client_.original);
}

std::string format_writer::chunk(const nlohmann::json& chat_chunk) {
  if (anthropic_) return anthropic_->on_chunk(chat_chunk);
  if (responses_) return responses_->on_chunk(chat_chunk);
  if (format_ == api_format::openai_functions) {
    nlohmann::json legacy = chat_chunk;
    legacy_functions_chunk(legacy);
    return sse(legacy);
  }
  return sse(chat_chunk);
}

std::string format_writer::end(const std::optional<std::string>& matched_stop) {
  if (anthropic_) return anthropic_->finish(matched_stop);
  if (responses_) {
    std::string out = responses_->finish();
    if (client_.keep && responses_->completed()) client_.keep(*responses_->completed());
    return out;
  }
  return "data: [DONE]\n\n";
}

std::string format_writer::whole(const nlohmann::json& chat_response,
                                 const std::optional<std::string>& matched_stop) const {
  const auto text = [](const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  switch (format_) {
    case api_format::anthropic: return text(chat_to_anthropic_response(chat_response, matched_stop));
    case api_format::responses: {
      const nlohmann::ordered_json response =
          chat_to_responses_response(chat_response, client_.original);
      if (client_.keep) client_.keep(response);
      return text(response);
    }
    case api_format::openai_functions: {
      nlohmann::json legacy = chat_response;
      legacy_functions_response(legacy);
      return wire(legacy);
    }
    case api_format::openai: break;
  }
  return wire(chat_response);
}

}  // namespace courier::admission
