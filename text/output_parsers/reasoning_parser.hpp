#pragma once
// Splits a reasoning model's generated text into its reasoning (OpenAI-compatible servers send it
// as `reasoning_content`) and its answer (`content`), whole or as it streams. See README.md.
//
// Invariant: for any way of cutting an output into pieces, the feeds' deltas plus finish()'s,
// concatenated side by side, equal split_reasoning() of the whole output. No delta ends inside a
// UTF-8 character, except finish()'s when the output itself does.
#include <optional>
#include <string>
#include <string_view>

namespace courier::text::parsers {

enum class reasoning_kind {
  qwen3,        // reasoning only inside a leading <think>...</think>
  deepseek_r1,  // the prompt opened <think>: reasoning from the first byte up to </think>
};
// "qwen3", "deepseek_r1"; nullopt for anything else.
std::optional<reasoning_kind> reasoning_kind_from_name(std::string_view name);

struct reasoning_delta {
  std::string reasoning;
  std::string content;
};

// One stream's parser; spent after finish().
class reasoning_parser {
 public:
  explicit reasoning_parser(reasoning_kind kind);
  // The general form: whether text before any <think> is reasoning (deepseek_r1) or content
  // (qwen3). Either way a leading <think>, after optional whitespace, is dropped and opens
  // reasoning, and the first </think> closes it.
  explicit reasoning_parser(bool starts_in_reasoning);

  reasoning_delta feed(std::string_view piece);
  // The end of the output: held text goes to the side it was on.
  reasoning_delta finish();

 private:
  enum class phase {
    opening,    // whitespace so far; a <think> may follow
    reasoning,  // up to </think>
    newlines,   // just after </think>: up to two '\n' are dropped
    content,    // the rest, as it is
  };
  reasoning_delta run(bool at_end);

  bool starts_in_reasoning_;
  phase phase_ = phase::opening;
  std::string held_;       // input not yet given to a side
  int newlines_left_ = 0;  // '\n' still to drop in phase::newlines
  reasoning_delta carry_;  // each side's unfinished UTF-8 character from the last feed
};

reasoning_delta split_reasoning(reasoning_kind kind, std::string_view whole);

}  // namespace courier::text::parsers
