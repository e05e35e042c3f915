#include "actors/admission/api_format.hpp"

#include "actors/admission/api_response.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

std::string chat_body_of(api_format f, const std::string& body, int max_json_depth,
                         nlohmann::ordered_json& original) {
  if (f == api_format::openai) return body;
  original = parse_ordered_json_body(body, max_json_depth);
  const nlohmann::ordered_json chat = f == api_format::anthropic
                                          ? anthropic_to_chat_request(original)
                                          : responses_to_chat_request(original);
  return chat.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json error_body(api_format f, const api_error& e, const std::string& request_id) {
  if (f != api_format::anthropic) return e.to_json();
  nlohmann::json body = anthropic_error(e.status, e.to_json());
  if (!request_id.empty()) body["request_id"] = request_id;
  return body;
}

format_writer::format_writer(api_format f, const std::string& id, std::int64_t created,
                             const std::string& model, std::int64_t prompt_tokens,
                             nlohmann::ordered_json original)
    : format_(f), original_(std::move(original)) {
  if (f == api_format::anthropic) anthropic_.emplace(id, model, prompt_tokens);
  if (f == api_format::responses) responses_.emplace(id, created, model, original_);
}

std::string format_writer::chunk(const nlohmann::json& chat_chunk) {
  if (anthropic_) return anthropic_->on_chunk(chat_chunk);
  if (responses_) return responses_->on_chunk(chat_chunk);
  return sse(chat_chunk);
}

std::string format_writer::end(const std::optional<std::string>& matched_stop) {
  if (anthropic_) return anthropic_->finish(matched_stop);
  if (responses_) return responses_->finish();
  return "data: [DONE]\n\n";
}

std::string format_writer::whole(const nlohmann::json& chat_response,
                                 const std::optional<std::string>& matched_stop) const {
  const auto text = [](const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  switch (format_) {
    case api_format::anthropic: return text(chat_to_anthropic_response(chat_response, matched_stop));
    case api_format::responses: return text(chat_to_responses_response(chat_response, original_));
    case api_format::openai: break;
  }
  return wire(chat_response);
}

}  // namespace courier::admission
