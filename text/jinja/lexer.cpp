#include "text/jinja/lexer.hpp"

#include <cerrno>
#include <cstdlib>

#include "text/jinja/string_literal.hpp"
#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

using utf8::is_digit;
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}
bool is_tag_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\v';
}

std::string normalize_newlines(std::string_view source) {
  std::string s;
  s.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      s += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      s += source[i];
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();  // Jinja's keep_trailing_newline=False
  return s;
}

class lexer {
 public:
  explicit lexer(std::string source) : src_(std::move(source)) {}

  std::vector<token> run() {
    while (pos_ < src_.size()) {
      const std::size_t open = find_tag_open();
      const int text_line = line_;
      std::string text = src_.substr(pos_, open - pos_);
      advance(open - pos_);
      if (open == src_.size()) {
        emit_text(std::move(text), text_line);
        break;
      }
      const char tag = src_[open + 1];
      const char mod = modifier_at(open + 2);
      if (mod == '-') {
        text = std::string(utf8::trim(text, false, true));
      } else if (tag != '{' && mod != '+') {
        lstrip_block(text);
      }
      emit_text(std::move(text), text_line);
      const int tag_line = line_;
      advance(mod != 0 ? 3 : 2);
      if (tag == '#') {
        lex_comment(tag_line);
      } else {
        lex_tag(tag, tag_line);
      }
    }
    token end;
    end.line = line_;
    out_.push_back(end);
    return std::move(out_);
  }

 private:
  char at(std::size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  char modifier_at(std::size_t i) const { return at(i) == '-' || at(i) == '+' ? at(i) : 0; }

  void advance(std::size_t n) {
    for (std::size_t end = pos_ + n; pos_ < end; ++pos_) {
      if (src_[pos_] == '\n') ++line_;
    }
  }

  [[noreturn]] void fail(const std::string& message, int line) const {
    throw template_error(message, line);
  }

  std::size_t find_tag_open() const {
    for (std::size_t p = src_.find('{', pos_); p != std::string::npos; p = src_.find('{', p + 1)) {
      const char c = at(p + 1);
      if (c == '{' || c == '%' || c == '#') return p;
    }
    return src_.size();
  }

  void emit_text(std::string text, int line) {
    if (text.empty()) return;
    token t;
    t.kind = token_kind::text;
    t.text = std::move(text);
    t.line = line;
    out_.push_back(std::move(t));
  }

  // lstrip_blocks: spaces and tabs between the start of a line and a block or comment tag go.
  void lstrip_block(std::string& text) const {
    const std::size_t nl = text.rfind('\n');
    const std::size_t from =
        nl != std::string::npos ? nl + 1 : (line_start_ ? 0 : std::string::npos);
    if (from != std::string::npos && text.find_first_not_of(" \t", from) == std::string::npos) {
      text.erase(from);
    }
  }

  // Whitespace control after a closing tag; sets whether the next text starts a line.
  void after_close(char tag, char mod) {
    if (mod == '-') {
      bool newline = false;
      while (pos_ < src_.size()) {
        std::size_t next = pos_;
        if (!utf8::is_space(utf8::decode(src_, next))) break;
        newline = src_[pos_] == '\n';
        advance(next - pos_);
      }
      line_start_ = newline;
    } else if (tag != '{' && mod != '+' && at(pos_) == '\n') {
      advance(1);  // trim_blocks
      line_start_ = true;
    } else {
      line_start_ = false;
    }
  }

  void lex_comment(int tag_line) {
    const std::size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) fail("unclosed comment: '{#' without '#}'", tag_line);
    const char mod = end > pos_ ? modifier_at(end - 1) : 0;
    advance(end + 2 - pos_);
    after_close('#', mod);
  }

  void lex_tag(char tag, int tag_line) {
    const bool is_var = tag == '{';
    token begin;
    begin.kind = is_var ? token_kind::var_begin : token_kind::block_begin;
    begin.line = tag_line;
    out_.push_back(begin);
    const std::size_t first = out_.size();
    const char close = is_var ? '}' : '%';
    int depth = 0;  // open brackets: a closing tag inside them is not one (as in Jinja)
    while (true) {
      while (pos_ < src_.size() && is_tag_space(src_[pos_])) advance(1);
      if (pos_ >= src_.size()) {
        fail(is_var ? "unclosed '{{': missing '}}'" : "unclosed '{%': missing '%}'", tag_line);
      }
      if (depth == 0) {
        std::size_t p = pos_;
        char mod = 0;
        if ((src_[p] == '-' || (src_[p] == '+' && !is_var)) && at(p + 1) == close &&
            at(p + 2) == '}') {
          mod = src_[p++];
        }
        if (src_[p] == close && at(p + 1) == '}') {
          advance(p + 2 - pos_);
          const bool raw = !is_var && out_.size() == first + 1 &&
                           out_.back().kind == token_kind::name && out_.back().text == "raw";
          if (raw) {
            out_.resize(first - 1);
            lex_raw(mod, tag_line);
            return;
          }
          token end;
          end.kind = is_var ? token_kind::var_end : token_kind::block_end;
          end.line = line_;
          out_.push_back(end);
          after_close(tag, mod);
          return;
        }
      }
      lex_token(depth);
    }
  }

  // `{% raw %}...{% endraw %}`: the content is text, tags in it included.
  void lex_raw(char raw_close_mod, int tag_line) {
    if (raw_close_mod == '-') after_close('%', '-');
    const int text_line = line_;
    for (std::size_t p = src_.find("{%", pos_); p != std::string::npos;
         p = src_.find("{%", p + 1)) {
      const char open_mod = modifier_at(p + 2);
      std::size_t q = p + (open_mod != 0 ? 3 : 2);
      while (is_tag_space(at(q))) ++q;
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q += 6;
      while (is_tag_space(at(q))) ++q;
      const char close_mod = (at(q) == '-' || at(q) == '+') && at(q + 1) == '%' ? at(q++) : 0;
      if (at(q) != '%' || at(q + 1) != '}') continue;
      std::string text = src_.substr(pos_, p - pos_);
      line_start_ = false;
      if (open_mod == '-') {
        text = std::string(utf8::trim(text, false, true));
      } else if (open_mod != '+') {
        lstrip_block(text);
      }
      emit_text(std::move(text), text_line);
      advance(q + 2 - pos_);
      after_close('%', close_mod);
      return;
    }
    fail("unclosed raw block: '{% raw %}' without '{% endraw %}'", tag_line);
  }

  void lex_token(int& depth) {
    const char c = src_[pos_];
    token t;
    t.line = line_;
    if (is_name_start(c)) {
      std::size_t end = pos_;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      t.kind = token_kind::name;
      t.text = src_.substr(pos_, end - pos_);
      advance(end - pos_);
    } else if (is_digit(c)) {
      lex_number(t);
    } else if (c == '\'' || c == '"') {
      lex_string(t);
    } else {
      static const char* const two[] = {"//", "**", "==", "!=", "<=", ">="};
      t.kind = token_kind::op;
      for (const char* op : two) {
        if (src_.compare(pos_, 2, op) == 0) t.text = op;
      }
      if (t.text.empty()) {
        if (std::string_view("+-*/%~<>=.,:|()[]{}").find(c) == std::string_view::npos) {
          fail(std::string("unexpected character '") + c + "' in a tag", line_);
        }
        t.text = std::string(1, c);
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      }
      advance(t.text.size());
    }
    out_.push_back(std::move(t));
  }

  std::size_t digits_end(std::size_t p) const {
    while (is_digit(at(p)) || (at(p) == '_' && is_digit(at(p + 1)))) ++p;
    return p;
  }

  void lex_number(token& t) {
    // After a '.', digits are an attribute (`x.0`), never the fraction of a float.
    const bool after_dot =
        !out_.empty() && out_.back().kind == token_kind::op && out_.back().text == ".";
    std::size_t end = digits_end(pos_);
    bool is_float = false;
    if (!after_dot && at(end) == '.' && is_digit(at(end + 1))) {
      is_float = true;
      end = digits_end(end + 1);
    }
    const char e1 = at(end + 1);
    if (!after_dot && (at(end) == 'e' || at(end) == 'E') &&
        (is_digit(e1) || ((e1 == '+' || e1 == '-') && is_digit(at(end + 2))))) {
      is_float = true;
      end = digits_end(end + (is_digit(e1) ? 1 : 2));
    }
    std::string spelled;
    for (std::size_t i = pos_; i < end; ++i) {
      if (src_[i] != '_') spelled += src_[i];
    }
    errno = 0;
    if (is_float) {
      t.kind = token_kind::floating;
      t.float_value = std::strtod(spelled.c_str(), nullptr);
    } else {
      t.kind = token_kind::integer;
      t.int_value = std::strtoll(spelled.c_str(), nullptr, 10);
      if (errno == ERANGE) fail("integer literal " + spelled + " is too large", line_);
    }
    t.text = std::move(spelled);
    advance(end - pos_);
  }

  void lex_string(token& t) {
    t.kind = token_kind::string;
    pos_ = decode_string_literal(src_, pos_, line_, t.text);
  }

  std::string src_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool line_start_ = true;  // the next text begins a line (lstrip_blocks)
  std::vector<token> out_;
};

}  // namespace

std::vector<token> tokenize(std::string_view source) {
  return lexer(normalize_newlines(source)).run();
}

}  // namespace courier::text::jinja
