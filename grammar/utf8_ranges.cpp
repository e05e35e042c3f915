#include "grammar/utf8_ranges.hpp"

#include <array>
#include <utility>

namespace courier::grammar {

std::vector<std::vector<byte_range>> utf8_sequences(code_point_range r) {
  std::vector<std::vector<byte_range>> out;
  std::vector<code_point_range> todo{r};
  // The last code point of each encoded length.
  constexpr std::array<char32_t, 3> length_ends{0x7F, 0x7FF, 0xFFFF};
  while (!todo.empty()) {
    code_point_range cur = todo.back();
    todo.pop_back();
    bool split = false;
    // Split where the encoded length changes.
    for (char32_t end : length_ends) {
      if (cur.first <= end && cur.last > end) {
        todo.push_back({end + 1, cur.last});
        todo.push_back({cur.first, end});
        split = true;
        break;
      }
    }
    if (split) continue;
    if (cur.last < 0x80) {
      out.push_back({{static_cast<std::uint8_t>(cur.first), static_cast<std::uint8_t>(cur.last)}});
      continue;
    }
    // Split until every continuation byte position spans its full range or a single prefix:
    // then the byte ranges position by position encode exactly the range.
    for (int i = 1; i < 4 && !split; ++i) {
      const char32_t m = (char32_t{1} << (6 * i)) - 1;
      if ((cur.first & ~m) != (cur.last & ~m)) {
        if ((cur.first & m) != 0) {
          todo.push_back({(cur.first | m) + 1, cur.last});
          todo.push_back({cur.first, cur.first | m});
          split = true;
        } else if ((cur.last & m) != m) {
          todo.push_back({cur.last & ~m, cur.last});
          todo.push_back({cur.first, (cur.last & ~m) - 1});
          split = true;
        }
      }
    }
    if (split) continue;
    std::string lo, hi;
    append_utf8(lo, cur.first);
    append_utf8(hi, cur.last);
    std::vector<byte_range> seq;
    for (std::size_t k = 0; k < lo.size(); ++k) {
      seq.push_back({static_cast<std::uint8_t>(lo[k]), static_cast<std::uint8_t>(hi[k])});
    }
    out.push_back(std::move(seq));
  }
  return out;
}

}  // namespace courier::grammar
