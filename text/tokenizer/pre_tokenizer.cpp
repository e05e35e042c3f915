#include "text/tokenizer/pre_tokenizer.hpp"

#include <algorithm>
#include <utility>

namespace courier::text {

namespace {

// GPT-2's pattern, which ByteLevel applies when use_regex is true.
constexpr std::string_view gpt2_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The Isolated behaviour: every match and every gap between matches is a piece of its own.
void push_isolated(std::string_view piece, const std::vector<match_span>& matches,
                   std::vector<std::string_view>& out) {
  std::size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) out.push_back(piece.substr(prev, b - prev));
    if (e > b) out.push_back(piece.substr(b, e - b));
    prev = e;
  }
  if (prev != piece.size()) out.push_back(piece.substr(prev));
}

}  // namespace

void pre_tokenizer::add_split(split_step step) {
  splits_.push_back(std::move(step));
}

void pre_tokenizer::add_byte_level(byte_level_step step) {
  byte_level_ = step;
  if (step.use_regex) gpt2_.emplace(gpt2_pattern, false);
}

void pre_tokenizer::apply_split(const split_step& step, std::string_view piece,
                                pre_tokenizer_scratch& scratch) const {
  // As NormalizedString::split in Hugging Face tokenizers: the matches and the gaps between
  // them cover the piece; the behaviour decides what is kept and what is glued together.
  step.pattern.find_all(piece, scratch.matches);
  if (step.behavior == split_behavior::isolated) {  // invert changes nothing here
    push_isolated(piece, scratch.matches, scratch.next);
    return;
  }
  std::vector<split_part>& parts = scratch.parts;
  std::vector<split_part>& merged = scratch.merged;
  parts.clear();
  std::size_t prev = 0;
  for (const auto& [b, e] : scratch.matches) {
    if (prev != b) parts.push_back({prev, b, step.invert});
    parts.push_back({b, e, !step.invert});
    prev = e;
  }
  if (prev != piece.size()) parts.push_back({prev, piece.size(), step.invert});

  merged.clear();
  switch (step.behavior) {
    case split_behavior::isolated:  // handled above
    case split_behavior::removed:
      merged = parts;  // flag (is_match) now means "remove"
      break;
    case split_behavior::merged_with_previous: {
      bool previous_match = false;
      for (const split_part& p : parts) {
        if (p.flag && !previous_match && !merged.empty()) {
          merged.back().end = p.end;
        } else {
          merged.push_back({p.begin, p.end, false});
        }
        previous_match = p.flag;
      }
      break;
    }
    case split_behavior::merged_with_next: {
      bool previous_match = false;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->flag && !previous_match && !merged.empty()) {
          merged.back().begin = it->begin;
        } else {
          merged.push_back({it->begin, it->end, false});
        }
        previous_match = it->flag;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    }
    case split_behavior::contiguous: {
      bool previous_match = false;
      for (const split_part& p : parts) {
        if (p.flag == previous_match && !merged.empty()) {
          merged.back().end = p.end;
        } else {
          merged.push_back({p.begin, p.end, false});
        }
        previous_match = p.flag;
      }
      break;
    }
  }
  for (const split_part& p : merged) {
    if (!p.flag && p.end > p.begin) scratch.next.push_back(piece.substr(p.begin, p.end - p.begin));
  }
}

const std::vector<std::string_view>& pre_tokenizer::split(std::string_view text,
                                                          pre_tokenizer_scratch& scratch) const {
  scratch.current.clear();
  scratch.prefixed.clear();
  if (!text.empty()) scratch.current.push_back(text);
  for (const split_step& step : splits_) {
    scratch.next.clear();
    for (std::string_view piece : scratch.current) apply_split(step, piece, scratch);
    std::swap(scratch.current, scratch.next);
  }
  if (byte_level_) {
    scratch.next.clear();
    for (std::string_view piece : scratch.current) {
      if (byte_level_->add_prefix_space && piece.front() != ' ') {
        scratch.prefixed.push_back(" " + std::string(piece));
        piece = scratch.prefixed.back();
      }
      if (!gpt2_) {
        scratch.next.push_back(piece);
        continue;
      }
      gpt2_->find_all(piece, scratch.matches);
      push_isolated(piece, scratch.matches, scratch.next);
    }
    std::swap(scratch.current, scratch.next);
  }
  return scratch.current;
}

bool pre_tokenizer::removes_text() const {
  for (const split_step& step : splits_) {
    if (step.behavior == split_behavior::removed) return true;
  }
  return false;
}

}  // namespace courier::text
