#include "text/output_parsers/text_scan.hpp"

#include <algorithm>

namespace courier::text::parsers {

match starts_with(std::string_view s, std::string_view literal) {
  if (s.size() >= literal.size())
    return s.substr(0, literal.size()) == literal ? match::yes : match::no;
  return literal.substr(0, s.size()) == s ? match::partial : match::no;
}

std::size_t partial_marker_tail(std::string_view s, std::string_view marker) {
  if (marker.empty()) return 0;
  for (std::size_t len = std::min(s.size(), marker.size() - 1); len > 0; --len) {
    if (s.substr(s.size() - len) == marker.substr(0, len)) return len;
  }
  return 0;
}

std::size_t incomplete_utf8_tail(std::string_view s) {
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: its lead is further back
    const std::size_t length = c >= 0xC2 && c <= 0xDF   ? 2
                               : c >= 0xE0 && c <= 0xEF ? 3
                               : c >= 0xF0 && c <= 0xF4 ? 4
                                                        : 1;
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace courier::text::parsers
