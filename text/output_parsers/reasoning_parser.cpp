#include "text/output_parsers/reasoning_parser.hpp"

#include <utility>

#include "text/output_parsers/text_scan.hpp"

namespace courier::text::parsers {
namespace {

constexpr std::string_view think_open = "<think>";
constexpr std::string_view think_close = "</think>";

// Moves an unfinished UTF-8 character at the end of `from` to `to`.
void hold_incomplete(std::string& from, std::string& to) {
  const std::size_t n = incomplete_utf8_tail(from);
  to.assign(from, from.size() - n, n);
  from.resize(from.size() - n);
}

}  // namespace

std::optional<reasoning_kind> reasoning_kind_from_name(std::string_view name) {
  if (name == "qwen3") return reasoning_kind::qwen3;
  if (name == "deepseek_r1") return reasoning_kind::deepseek_r1;
  return std::nullopt;
}

reasoning_parser::reasoning_parser(reasoning_kind kind)
    : reasoning_parser(kind == reasoning_kind::deepseek_r1) {}

reasoning_parser::reasoning_parser(bool starts_in_reasoning)
    : starts_in_reasoning_(starts_in_reasoning) {}

reasoning_delta reasoning_parser::feed(std::string_view piece) {
  held_.append(piece);
  return run(false);
}

reasoning_delta reasoning_parser::finish() {
  return run(true);
}

reasoning_delta reasoning_parser::run(bool at_end) {
  reasoning_delta out = std::exchange(carry_, {});
  const std::string_view text = held_;
  std::size_t pos = 0;
  bool waiting = false;
  while (!waiting) {
    switch (phase_) {
      case phase::opening: {
        std::size_t p = pos;
        while (p < text.size() && is_json_space(text[p])) ++p;
        const match m = starts_with(text.substr(p), think_open);
        if (m == match::yes) {
          pos = p + think_open.size();  // whitespace before <think> goes with it
          phase_ = phase::reasoning;
        } else if (m == match::partial && !at_end) {
          waiting = true;
        } else {  // the whitespace is read again on its side
          phase_ = starts_in_reasoning_ ? phase::reasoning : phase::content;
        }
        break;
      }
      case phase::reasoning: {
        const std::size_t at = text.find(think_close, pos);
        if (at == std::string_view::npos) {
          const std::size_t end =
              text.size() - (at_end ? 0 : partial_marker_tail(text.substr(pos), think_close));
          out.reasoning.append(text.substr(pos, end - pos));
          pos = end;
          waiting = true;
        } else {
          out.reasoning.append(text.substr(pos, at - pos));
          pos = at + think_close.size();
          phase_ = phase::newlines;
          newlines_left_ = 2;
        }
        break;
      }
      case phase::newlines:
        // Qwen3 writes "</think>\n\n" before its answer, and its chat template strips those
        // newlines when it reads the answer back (`.lstrip('\n')`).
        while (newlines_left_ > 0 && pos < text.size() && text[pos] == '\n') {
          ++pos;
          --newlines_left_;
        }
        if (pos == text.size() && newlines_left_ > 0) {
          waiting = true;
        } else {
          phase_ = phase::content;
        }
        break;
      case phase::content:
        out.content.append(text.substr(pos));
        pos = text.size();
        waiting = true;
        break;
    }
  }
  held_.erase(0, pos);
  if (!at_end) {
    hold_incomplete(out.reasoning, carry_.reasoning);
    hold_incomplete(out.content, carry_.content);
  }
  return out;
}

reasoning_delta split_reasoning(reasoning_kind kind, std::string_view whole) {
  reasoning_parser parser(kind);
  reasoning_delta out = parser.feed(whole);
  reasoning_delta rest = parser.finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

}  // namespace courier::text::parsers
