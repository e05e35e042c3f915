#include "actors/admission/http/wire_format.hpp"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace courier::http {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

namespace {

// RFC 9110 tchar.
bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// RFC 9110 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT". Names spelled out here rather
// than by strftime, whose %a and %b follow the process's locale.
std::string http_date() {
  static constexpr const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[40];
  int n = std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday],
                        tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                        tm.tm_sec);
  return std::string(buf, static_cast<std::size_t>(n));
}

void append_header(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

bool status_allows_body(int status) {
  return status >= 200 && status != 204 && status != 304;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

bool is_settable_header(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!is_token_char(c)) return false;
  }
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  for (std::string_view managed : {"content-length", "transfer-encoding", "connection", "date",
                                   "server", "content-type", "keep-alive", "upgrade"}) {
    if (iequals(name, managed)) return false;
  }
  return true;
}

std::string format_head(const response_head& head) {
  // A status outside 100..999 would not be a valid status line.
  int status = head.status >= 100 && head.status <= 999 ? head.status : 500;
  std::string out;
  out.reserve(256);
  out.append("HTTP/1.1 ").append(std::to_string(status)).append(" ");
  out.append(reason_phrase(status)).append("\r\n");
  append_header(out, "Server", "courier");
  append_header(out, "Date", http_date());
  if (!head.content_type.empty() && is_settable_header("x", head.content_type)) {
    append_header(out, "Content-Type", head.content_type);
  }
  bool has_retry_after = false;
  for (const auto& [name, value] : head.extra_headers) {
    if (!is_settable_header(name, value)) continue;
    append_header(out, name, value);
    has_retry_after = has_retry_after || iequals(name, "retry-after");
  }
  if (status == 503 && !has_retry_after) {
    append_header(out, "Retry-After", std::to_string(default_retry_after_s));
  }
  switch (head.framing) {
    case body_framing::content_length:
      if (status_allows_body(status)) {
        append_header(out, "Content-Length", std::to_string(head.content_length));
      }
      break;
    case body_framing::chunked:
      append_header(out, "Transfer-Encoding", "chunked");
      break;
    case body_framing::until_close:
      break;
  }
  bool keep_alive = head.keep_alive && head.framing != body_framing::until_close;
  if (!keep_alive) {
    append_header(out, "Connection", "close");
  } else if (head.http10_client) {
    append_header(out, "Connection", "keep-alive");
  }
  out.append("\r\n");
  return out;
}

std::string chunk_prefix(std::size_t size_bytes) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%zx\r\n", size_bytes);
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string error_json(int status, std::string_view message) {
  std::string out = "{\"error\":{\"message\":";
  append_json_string(out, message);
  out.append(",\"type\":");
  out.append(status >= 500 ? "\"server_error\"" : "\"invalid_request_error\"");
  out.append(",\"param\":null,\"code\":null}}");
  return out;
}

}  // namespace courier::http
