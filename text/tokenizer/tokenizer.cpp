#include "text/tokenizer/tokenizer.hpp"

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

void encode_plain(const tokenizer::state& s, std::string_view text, encode_scratch& scratch,
                  std::vector<token_id>& ids) {
  for (std::string_view word : s.pre.split(text, scratch.pre)) s.model->encode_word(word, ids);
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
  const state& s = *state_;
  std::string repaired;
  if (!utf8::is_valid(text)) {
    repaired = utf8::repaired(text);
    text = repaired;
  }
  std::vector<token_id> ids;
  ids.reserve(text.size() / 4 + 8);
  if (add_special_tokens) ids = s.post.prefix;
  encode_scratch scratch;
  // As Hugging Face's AddedVocabulary::extract_and_normalize: non-normalized added tokens are
  // found in the raw text, each remaining piece is normalized on its own, normalized added
  // tokens are found in it, and what is left is pre-tokenized and run through the model.
  s.added.split(text, false, scratch.raw_spans);
  for (const text_span& span : scratch.raw_spans) {
    if (span.id) {
      ids.push_back(*span.id);
      continue;
    }
    const std::string_view piece =
        s.norm.apply(text.substr(span.begin, span.end - span.begin), scratch.normalized);
    if (!s.added.has_normalized_tokens()) {
      encode_plain(s, piece, scratch, ids);
      continue;
    }
    scratch.normalized_spans.clear();
    s.added.split(piece, true, scratch.normalized_spans);
    for (const text_span& sub : scratch.normalized_spans) {
      if (sub.id) {
        ids.push_back(*sub.id);
      } else {
        encode_plain(s, piece.substr(sub.begin, sub.end - sub.begin), scratch, ids);
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
