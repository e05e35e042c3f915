#include "text/tokenizer/cleanup.hpp"

#include <array>
#include <utility>

namespace courier::text {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 10> rules = {{
    {" .", "."},
    {" ?", "?"},
    {" !", "!"},
    {" ,", ","},
    {" ' ", "'"},
    {" n't", "n't"},
    {" 'm", "'m"},
    {" 's", "'s"},
    {" 've", "'ve"},
    {" 're", "'re"},
}};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::size_t pos = s.find(from);
  if (pos == std::string::npos) return;
  std::string out;
  out.reserve(s.size());
  std::size_t last = 0;
  while (pos != std::string::npos) {
    out.append(s, last, pos - last);
    out += to;
    last = pos + from.size();
    pos = s.find(from, last);
  }
  out.append(s, last, std::string::npos);
  s.swap(out);
}

}  // namespace

std::string clean_up_tokenization(std::string_view text) {
  std::string s(text);
  if (s.find(' ') == std::string::npos) return s;
  for (const auto& [from, to] : rules) replace_all(s, from, to);
  return s;
}

std::size_t cleanup_safe_split(std::string_view text) {
  std::size_t n = text.size();
  while (n >= 3) {
    const std::size_t space = text.substr(n - 3, 3).rfind(' ');
    if (space == std::string_view::npos) return n;
    n = n - 3 + space;  // the split must come before this space
  }
  return 0;
}

}  // namespace courier::text
