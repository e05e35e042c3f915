#pragma once
// Runs an output through the parsers whole, split in two at every byte, in three at every pair of
// bytes (short outputs), and one byte at a time, and checks each against one expectation written
// by hand. Assembling streamed events is done here, independently of the library's own.
#include <catch2/catch.hpp>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "text/output_parsers/reasoning_parser.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

namespace courier::text::parsers::testing {

struct call {
  std::string name, arguments;
  bool operator==(const call& o) const { return name == o.name && arguments == o.arguments; }
};

struct tool_result {
  std::string content;
  std::vector<call> calls;
  bool truncated = false;
  bool operator==(const tool_result& o) const {
    return content == o.content && calls == o.calls && truncated == o.truncated;
  }
  bool operator!=(const tool_result& o) const { return !(*this == o); }
};

inline std::ostream& operator<<(std::ostream& os, const tool_result& r) {
  os << "content: \"" << r.content << "\"";
  for (const call& c : r.calls) os << "\n  call " << c.name << ": " << c.arguments;
  return os << (r.truncated ? "\n  (truncated)" : "");
}

// Whether `s` is whole UTF-8 characters (the test outputs are valid UTF-8, so every piece must be).
inline bool whole_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t j = 1; j < n; ++j) {
      if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Feeds the pieces, then finish(), and assembles the events; a broken streaming contract (an
// argument before its call_begin, an index out of order, an empty piece, a piece that ends inside
// a character) shows up as the content "CONTRACT BROKEN". Only finish() may give a piece that is
// not whole UTF-8, when the output itself is not.
inline tool_result stream(tool_family family, const std::vector<std::string_view>& pieces) {
  tool_call_parser parser(family);
  std::string whole;
  for (std::string_view piece : pieces) whole += piece;
  tool_result r;
  bool broken = false;
  auto take = [&](const std::vector<tool_event>& events, bool last) {
    const bool utf8_due = !last || whole_utf8(whole);
    for (const tool_event& e : events) {
      const bool text_ok = !e.text.empty() && (!utf8_due || whole_utf8(e.text));
      switch (e.k) {
        case tool_event::kind::content:
          broken |= !text_ok;
          r.content += e.text;
          break;
        case tool_event::kind::call_begin:
          broken |= e.index != r.calls.size();
          r.calls.push_back({e.text, ""});
          break;
        case tool_event::kind::arguments:
          broken |= !text_ok || e.index + 1 != r.calls.size();
          if (!broken) r.calls.back().arguments += e.text;
          break;
      }
    }
  };
  for (std::string_view piece : pieces) take(parser.feed(piece), false);
  take(parser.finish(), true);
  r.truncated = parser.truncated_call();
  if (broken) r.content = "CONTRACT BROKEN";
  return r;
}

inline void check_tool_output(tool_family family, std::string_view whole,
                              const tool_result& expected) {
  INFO("output: " << whole);
  const parsed_output p = parse_tool_calls(family, whole);
  tool_result from_whole{p.content, {}, p.truncated_call};
  for (const tool_call& c : p.calls) from_whole.calls.push_back({c.name, c.arguments});
  CHECK(from_whole == expected);
  CHECK(stream(family, {whole}) == expected);
  for (std::size_t k = 0; k <= whole.size(); ++k) {
    const tool_result r = stream(family, {whole.substr(0, k), whole.substr(k)});
    if (r != expected) {
      INFO("split at byte " << k);
      CHECK(r == expected);
      return;
    }
  }
  if (whole.size() <= 160) {
    for (std::size_t i = 0; i <= whole.size(); ++i) {
      for (std::size_t j = i; j <= whole.size(); ++j) {
        const tool_result r =
            stream(family, {whole.substr(0, i), whole.substr(i, j - i), whole.substr(j)});
        if (r != expected) {
          INFO("split at bytes " << i << " and " << j);
          CHECK(r == expected);
          return;
        }
      }
    }
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < whole.size(); ++i) bytes.push_back(whole.substr(i, 1));
  CHECK(stream(family, bytes) == expected);
}

struct reasoning_result {
  std::string reasoning, content;
  bool operator==(const reasoning_result& o) const {
    return reasoning == o.reasoning && content == o.content;
  }
  bool operator!=(const reasoning_result& o) const { return !(*this == o); }
};

inline std::ostream& operator<<(std::ostream& os, const reasoning_result& r) {
  return os << "reasoning: \"" << r.reasoning << "\", content: \"" << r.content << "\"";
}

inline reasoning_result stream(reasoning_parser parser,
                               const std::vector<std::string_view>& pieces) {
  reasoning_result r;
  bool broken = false;
  auto take = [&](const reasoning_delta& d, bool last) {
    broken |= !last && (!whole_utf8(d.reasoning) || !whole_utf8(d.content));
    r.reasoning += d.reasoning;
    r.content += d.content;
  };
  for (std::string_view piece : pieces) take(parser.feed(piece), false);
  take(parser.finish(), true);
  if (broken) r.content = "CONTRACT BROKEN";
  return r;
}

inline void check_reasoning(reasoning_kind kind, std::string_view whole,
                            const reasoning_result& expected) {
  INFO("output: " << whole);
  const reasoning_delta d = split_reasoning(kind, whole);
  CHECK(reasoning_result{d.reasoning, d.content} == expected);
  const reasoning_parser fresh(kind);
  for (std::size_t i = 0; i <= whole.size(); ++i) {
    for (std::size_t j = i; j <= whole.size(); ++j) {
      const reasoning_result r =
          stream(fresh, {whole.substr(0, i), whole.substr(i, j - i), whole.substr(j)});
      if (r != expected) {
        INFO("split at bytes " << i << " and " << j);
        CHECK(r == expected);
        return;
      }
    }
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < whole.size(); ++i) bytes.push_back(whole.substr(i, 1));
  CHECK(stream(fresh, bytes) == expected);
}

}  // namespace courier::text::parsers::testing
