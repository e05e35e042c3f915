#include "actors/admission/http/response_encoder.hpp"

#include "actors/admission/http/wire_format.hpp"

namespace courier::http {

out_frame error_frame(int status, std::string_view message,
                      std::vector<std::pair<std::string, std::string>> extra) {
  response_head head;
  head.status = status;
  head.extra_headers = std::move(extra);
  head.content_type = "application/json";
  std::string body = error_json(status, message);
  head.content_length = body.size();
  head.keep_alive = false;
  return out_frame{format_head(head), std::move(body), {}, false, true};
}

void response_encoder::with_transport_headers(response_head& head) const {
  head.extra_headers.insert(head.extra_headers.end(), traits_.transport_headers.begin(),
                            traits_.transport_headers.end());
}

std::optional<out_frame> response_encoder::send(
    int status, std::string content_type, std::string body,
    std::vector<std::pair<std::string, std::string>> extra, bool closing) {
  if (phase_ != phase::awaiting) return std::nullopt;
  phase_ = phase::done;
  if (!status_allows_body(status)) body.clear();
  response_head head;
  head.status = status;
  head.content_type = std::move(content_type);
  head.extra_headers = std::move(extra);
  with_transport_headers(head);
  head.content_length = body.size();
  head.keep_alive = traits_.keep_alive && !closing;
  head.http10_client = traits_.http10;
  if (traits_.head) body.clear();  // the length a GET would have, and no body
  return out_frame{format_head(head), std::move(body), {}, true, !head.keep_alive};
}

std::optional<out_frame> response_encoder::start_stream(
    int status, std::string content_type, std::vector<std::pair<std::string, std::string>> extra,
    bool closing) {
  if (phase_ != phase::awaiting) return std::nullopt;
  phase_ = phase::streaming;
  response_head head;
  head.status = status;
  head.content_type = std::move(content_type);
  head.extra_headers = std::move(extra);
  with_transport_headers(head);
  // HTTP/1.0 has no chunked encoding: the stream ends when the connection does.
  head.framing = traits_.http10 ? body_framing::until_close : body_framing::chunked;
  head.keep_alive = traits_.keep_alive && !closing && !traits_.http10;
  head.http10_client = traits_.http10;
  stream_closes_ = !head.keep_alive;
  return out_frame{format_head(head), {}, {}, false, false};
}

std::optional<out_frame> response_encoder::write_chunk(std::string data) {
  if (phase_ != phase::streaming || data.empty() || traits_.head) return std::nullopt;
  if (traits_.http10) return out_frame{{}, std::move(data), {}, false, false};
  return out_frame{chunk_prefix(data.size()), std::move(data), chunk_suffix, false, false};
}

std::optional<out_frame> response_encoder::end_stream() {
  if (phase_ != phase::streaming) return std::nullopt;
  phase_ = phase::done;
  bool chunked = !traits_.http10 && !traits_.head;
  return out_frame{chunked ? std::string(last_chunk) : std::string(), {}, {}, true, stream_closes_};
}

}  // namespace courier::http
