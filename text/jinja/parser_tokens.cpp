// The parser's token cursor, node helpers and errors.
#include <algorithm>

#include "text/jinja/parser.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

expr_ptr parser::make(expr_kind kind, int line) {
  auto e = std::make_unique<expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

expr_ptr parser::finish(expr_ptr node) const {
  int d = 0;
  for (const auto& a : node->args) {
    if (a) d = std::max(d, a->depth);
  }
  for (const auto& k : node->kwargs) d = std::max(d, k.value->depth);
  node->depth = d + 1;
  if (node->depth > max_expression_depth) {
    fail("expression nested more than " + std::to_string(max_expression_depth) + " levels deep",
         node->line);
  }
  return node;
}

const token& parser::peek(std::size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const token& parser::next() {
  const token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool parser::at_op(std::string_view op) const {
  return peek().kind == token_kind::op && peek().text == op;
}

bool parser::at_name(std::string_view name) const {
  return peek().kind == token_kind::name && peek().text == name;
}

void parser::expect_op(std::string_view op) {
  if (!at_op(op))
    fail("expected '" + std::string(op) + "', found " + describe(peek()), peek().line);
  next();
}

std::string parser::expect_name(std::string_view what) {
  if (peek().kind != token_kind::name) {
    fail("expected " + std::string(what) + ", found " + describe(peek()), peek().line);
  }
  return next().text;
}

void parser::expect_block_end() {
  if (peek().kind != token_kind::block_end) {
    fail("expected '%}', found " + describe(peek()), peek().line);
  }
  next();
}

std::string parser::describe(const token& t) {
  switch (t.kind) {
    case token_kind::text:
      return "template text";
    case token_kind::var_begin:
      return "'{{'";
    case token_kind::var_end:
      return "'}}'";
    case token_kind::block_begin:
      return "'{%'";
    case token_kind::block_end:
      return "'%}'";
    case token_kind::string:
      return "a string";
    case token_kind::end_of_input:
      return "the end of the template";
    default:
      return "'" + t.text + "'";
  }
}

void parser::fail(const std::string& message, int line) const {
  throw template_error(message, line);
}

}  // namespace courier::text::jinja
