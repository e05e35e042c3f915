#pragma once
// Sending an api_error as an HTTP response, with the headers its status calls for. Everything
// in admission that answers with an error goes through here, so that, say, every 503 tells
// the client when to come back.
#include <memory>

#include "actors/admission/api_format.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::admission {

// What a 503 (overloaded, shutting down) tells a client to wait before retrying, in seconds.
inline constexpr int retry_after_s = 1;

// The headers an error's status calls for: Retry-After for 503; none otherwise.
http::header_list error_headers(int status);

// Sends e as the whole response: e.status, e.to_json(), error_headers(e.status), then extra.
void send_api_error(http::response_writer& out, const api_error& e,
                    http::header_list extra = {});
// The same in the shape of API `f` (error_body: Anthropic's clients read their own).
void send_api_error(http::response_writer& out, const api_error& e, api_format f);

}  // namespace courier::admission
