#include "text/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "text/tokenizer/cleanup.hpp"
#include "text/tokenizer/tokenizer_state.hpp"
#include "text/tokenizer/utf8.hpp"

namespace courier::text {

namespace {

std::optional<std::string> read_file(const std::string& path, bool required) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!required && errno == ENOENT) return std::nullopt;
    throw tokenizer_error(path +
                          ": cannot read: " + (errno != 0 ? std::strerror(errno) : "cannot open"));
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Per-call buffers of encode().
struct encode_scratch {
  std::vector<text_span> raw_spans, normalized_spans;
  std::string normalized;
  pre_tokenizer_scratch pre;
};

// Appends the ids of `text` (no added tokens in it); false, with part of them appended, once
// `ids` would surely hold more than max_ids: the words' lengths prove it before BPE runs, or
// BPE has got there.
bool encode_plain(const tokenizer::state& s, std::string_view text, encode_scratch& scratch,
                  std::size_t max_ids, std::vector<token_id>& ids) {
  const std::vector<std::string_view>& words = s.pre.split(text, scratch.pre);
  if (const std::size_t per_id = s.model->max_bytes_per_id();
      per_id > 0 && max_ids != tokenizer::no_limit) {
    std::size_t fewest = ids.size();
    for (std::string_view word : words) fewest += (word.size() + per_id - 1) / per_id;
    if (fewest > max_ids) return false;
  }
  for (std::string_view word : words) {
    s.model->encode_word(word, ids);
    if (ids.size() > max_ids) return false;
  }
  return true;
}

}  // namespace

tokenizer::tokenizer(std::unique_ptr<const state> s) : state_(std::move(s)) {}
tokenizer::tokenizer(tokenizer&&) noexcept = default;
tokenizer& tokenizer::operator=(tokenizer&&) noexcept = default;
tokenizer::~tokenizer() = default;

tokenizer tokenizer::load(const std::string& tokenizer_json_path) {
  const std::string json = *read_file(tokenizer_json_path, true);
  const auto slash = tokenizer_json_path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? std::string() : tokenizer_json_path.substr(0, slash + 1);
  const std::optional<std::string> config = read_file(dir + "tokenizer_config.json", false);
  return tokenizer(load_tokenizer_state(json, config.value_or(""), tokenizer_json_path));
}

tokenizer tokenizer::from_json(std::string_view tokenizer_json, std::string_view config_json,
                               const std::string& origin) {
  return tokenizer(load_tokenizer_state(tokenizer_json, config_json, origin));
}

std::vector<token_id> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return *encode_at_most(text, no_limit, add_special_tokens);
}

std::optional<std::vector<token_id>> tokenizer::encode_at_most(std::string_view text,
                                                               std::size_t max_ids,
                                                               bool add_special_tokens) const {
  const state& s = *state_;
  std::string repaired;
  if (!utf8::is_valid(text)) {
    repaired = utf8::repaired(text);
    text = repaired;
  }
  std::vector<token_id> ids;
  ids.reserve(std::min(text.size() / 4, max_ids) + 8);
  if (add_special_tokens) ids = s.post.prefix;
  const std::size_t suffix = add_special_tokens ? s.post.suffix.size() : 0;
  // The suffix comes last: the rest may hold max_ids - suffix ids.
  if (max_ids != no_limit) {
    if (max_ids < suffix) return std::nullopt;
    max_ids -= suffix;
  }
  if (ids.size() > max_ids) return std::nullopt;
  encode_scratch scratch;
  // As Hugging Face's AddedVocabulary::extract_and_normalize: non-normalized added tokens are
  // found in the raw text, each remaining piece is normalized on its own, normalized added
  // tokens are found in it, and what is left is pre-tokenized and run through the model.
  s.added.split(text, false, scratch.raw_spans);
  for (const text_span& span : scratch.raw_spans) {
    if (span.id) {
      ids.push_back(*span.id);
      if (ids.size() > max_ids) return std::nullopt;
      continue;
    }
    const std::string_view piece =
        s.norm.apply(text.substr(span.begin, span.end - span.begin), scratch.normalized);
    if (!s.added.has_normalized_tokens()) {
      if (!encode_plain(s, piece, scratch, max_ids, ids)) return std::nullopt;
      continue;
    }
    scratch.normalized_spans.clear();
    s.added.split(piece, true, scratch.normalized_spans);
    for (const text_span& sub : scratch.normalized_spans) {
      if (sub.id) {
        ids.push_back(*sub.id);
        if (ids.size() > max_ids) return std::nullopt;
      } else if (!encode_plain(s, piece.substr(sub.begin, sub.end - sub.begin), scratch, max_ids,
                               ids)) {
        return std::nullopt;
      }
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), s.post.suffix.begin(), s.post.suffix.end());
  return ids;
}

std::string tokenizer::decode(const token_id* ids, std::size_t num_ids,
                              bool skip_special_tokens) const {
  const state& s = *state_;
  std::string raw;
  s.dec.append_bytes(ids, num_ids, skip_special_tokens, raw);
  std::string text;
  text.reserve(raw.size());
  utf8::append_repaired(text, raw, true);
  if (s.config.clean_up_tokenization_spaces) return clean_up_tokenization(text);
  return text;
}

std::optional<token_id> tokenizer::token_to_id(std::string_view token) const {
  if (auto id = state_->added.find(token)) return id;
  return state_->model->token_to_id(token);
}

std::optional<std::string> tokenizer::id_to_token(token_id id) const {
  if (const added_token* t = state_->added.find(id)) return t->content;
  if (const std::string* t = state_->model->id_to_token(id)) return *t;
  return std::nullopt;
}

std::size_t tokenizer::vocab_size() const {
  return state_->vocab_size;
}
std::size_t tokenizer::max_text_bytes_per_id() const {
  return state_->max_text_bytes_per_id;
}
token_id tokenizer::id_bound() const {
  return state_->id_bound;
}
bool tokenizer::is_special(token_id id) const {
  return state_->dec.is_special(id);
}
const special_token_ids& tokenizer::special_ids() const {
  return state_->specials;
}
const tokenizer_config& tokenizer::config() const {
  return state_->config;
}
std::string_view tokenizer::token_bytes(token_id id) const {
  return state_->dec.bytes(id);
}
bool tokenizer::cleans_up_spaces() const {
  return state_->config.clean_up_tokenization_spaces;
}

}  // namespace courier::text
