#pragma once
// Beast's parsed request as the handler's request. Included only by connection.cpp, which is
// the one translation unit that pays for Beast.
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "actors/admission/http/server.hpp"

namespace courier::http {

// Splits the target at the first '?'; lower-cases header names and joins repeats with ", "
// (RFC 9110 5.3); moves the body.
inline request to_request(boost::beast::http::request<boost::beast::http::string_body>&& msg) {
  request r;
  r.method = std::string(msg.method_string());
  std::string_view target(msg.target().data(), msg.target().size());
  std::size_t q = target.find('?');
  r.target = std::string(target.substr(0, q));
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value(field.value());
    auto [it, inserted] = r.headers.emplace(std::move(name), value);
    if (!inserted) it->second.append(", ").append(value);
  }
  r.body = std::move(msg.body());
  return r;
}

}  // namespace courier::http
