#include "text/tokenizer/incremental_detokenizer.hpp"

#include <utility>

#include "text/tokenizer/cleanup.hpp"
#include "text/tokenizer/utf8.hpp"

namespace courier::text {

std::string incremental_detokenizer::push(token_id id) {
  if (skip_special_ && tok_->is_special(id)) return {};
  std::string bytes = std::move(pending_bytes_);
  bytes += tok_->token_bytes(id);
  std::string& text = held_text_;
  const std::size_t unfinished = utf8::append_repaired(text, bytes, false);
  pending_bytes_.assign(bytes, bytes.size() - unfinished, unfinished);
  if (!cleanup_) return std::exchange(held_text_, std::string());
  const std::size_t safe = cleanup_safe_split(text);
  if (safe == 0) return {};
  std::string out = clean_up_tokenization(std::string_view(text).substr(0, safe));
  text.erase(0, safe);
  return out;
}

std::string incremental_detokenizer::flush() {
  utf8::append_repaired(held_text_, pending_bytes_, true);
  pending_bytes_.clear();
  std::string out = cleanup_ ? clean_up_tokenization(held_text_) : std::move(held_text_);
  held_text_.clear();
  return out;
}

}  // namespace courier::text
