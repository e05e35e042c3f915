#include "actors/admission/http_errors.hpp"

#include <string>
#include <utility>

#include "actors/admission/api_response.hpp"

namespace courier::admission {

http::header_list error_headers(int status) {
  http::header_list out;
  if (status == 503) out.emplace_back("Retry-After", std::to_string(retry_after_s));
  return out;
}

void send_api_error(http::response_writer& out, const api_error& e, http::header_list extra) {
  http::header_list headers = error_headers(e.status);
  headers.insert(headers.end(), std::make_move_iterator(extra.begin()),
                 std::make_move_iterator(extra.end()));
  out.send(e.status, "application/json", wire(e.to_json()), std::move(headers));
}

void send_api_error(http::response_writer& out, const api_error& e, api_format f) {
  out.send(e.status, "application/json", wire(error_body(f, e, out.request_id())),
           error_headers(e.status));
}

}  // namespace courier::admission
