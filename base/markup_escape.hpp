#pragma once
// Text escaped for HTML and XML: the five characters markup gives meaning to, written as
// Python's markupsafe writes them (Jinja's `escape` filter): & < > " ' as &amp; &lt; &gt; &#34;
// &#39; (numeric references, valid in HTML and XML alike). Header-only.
#include <string>
#include <string_view>

namespace courier::base {

// The entity that stands for `c`, or null when `c` stands for itself.
inline const char* markup_entity(char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&#34;";
    case '\'':
      return "&#39;";
    default:
      return nullptr;
  }
}

inline std::string escape_markup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (const char* entity = markup_entity(c)) {
      out += entity;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace courier::base
