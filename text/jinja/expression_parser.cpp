// The expression half of the parser (see parser.hpp for the precedence table).
#include <algorithm>

#include "text/jinja/parser.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

struct op_spelling {
  std::string_view text;
  op_kind op;
};

constexpr op_spelling compare_ops[] = {{"==", op_kind::eq}, {"!=", op_kind::ne},
                                       {"<", op_kind::lt},  {"<=", op_kind::le},
                                       {">", op_kind::gt},  {">=", op_kind::ge}};
constexpr op_spelling math2_ops[] = {
    {"*", op_kind::mul}, {"/", op_kind::div}, {"//", op_kind::floordiv}, {"%", op_kind::mod}};

}  // namespace

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

expr_ptr parser::parse_expression(bool with_condition) {
  nesting_guard guard(expression_nesting_, max_expression_depth, *this, peek().line);
  return with_condition ? parse_condition() : parse_or();
}

expr_ptr parser::parse_tuple_or_expression() {
  const int line = peek().line;
  expr_ptr first = parse_expression();
  if (!at_op(",")) return first;
  auto list = make(expr_kind::list, line);
  list->args.push_back(std::move(first));
  while (at_op(",")) {
    next();
    if (peek().kind == token_kind::block_end) break;
    list->args.push_back(parse_expression());
  }
  return finish(std::move(list));
}

expr_ptr parser::parse_condition() {
  expr_ptr node = parse_or();
  while (at_name("if")) {
    auto cond = make(expr_kind::cond, next().line);
    expr_ptr test = parse_or();
    expr_ptr otherwise;
    if (at_name("else")) {
      next();
      otherwise = parse_condition();
    }
    cond->args.push_back(std::move(node));
    cond->args.push_back(std::move(test));
    cond->args.push_back(std::move(otherwise));
    node = finish(std::move(cond));
  }
  return node;
}

expr_ptr parser::parse_or() {
  expr_ptr node = parse_and();
  while (at_name("or")) {
    auto bin = make(expr_kind::binary, next().line);
    bin->op = op_kind::or_;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_and());
    node = finish(std::move(bin));
  }
  return node;
}

expr_ptr parser::parse_and() {
  expr_ptr node = parse_not();
  while (at_name("and")) {
    auto bin = make(expr_kind::binary, next().line);
    bin->op = op_kind::and_;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_not());
    node = finish(std::move(bin));
  }
  return node;
}

expr_ptr parser::parse_not() {
  if (!at_name("not")) return parse_compare();
  nesting_guard guard(expression_nesting_, max_expression_depth, *this, peek().line);
  auto node = make(expr_kind::unary, next().line);
  node->op = op_kind::not_;
  node->args.push_back(parse_not());
  return finish(std::move(node));
}

expr_ptr parser::parse_compare() {
  const int line = peek().line;
  expr_ptr first = parse_math1();
  auto node = make(expr_kind::compare, line);
  while (true) {
    op_kind op = op_kind::none;
    for (const auto& c : compare_ops) {
      if (at_op(c.text)) op = c.op;
    }
    if (op != op_kind::none) {
      next();
    } else if (at_name("in")) {
      next();
      op = op_kind::in;
    } else if (at_name("not") && peek(1).kind == token_kind::name && peek(1).text == "in") {
      next();
      next();
      op = op_kind::not_in;
    } else {
      break;
    }
    node->ops.push_back(op);
    node->args.push_back(parse_math1());
  }
  if (node->ops.empty()) return first;
  node->args.insert(node->args.begin(), std::move(first));
  return finish(std::move(node));
}

expr_ptr parser::parse_math1() {
  expr_ptr node = parse_concat();
  while (at_op("+") || at_op("-")) {
    auto bin = make(expr_kind::binary, peek().line);
    bin->op = next().text == "+" ? op_kind::add : op_kind::sub;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_concat());
    node = finish(std::move(bin));
  }
  return node;
}

expr_ptr parser::parse_concat() {
  expr_ptr node = parse_math2();
  while (at_op("~")) {
    auto bin = make(expr_kind::binary, next().line);
    bin->op = op_kind::concat;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_math2());
    node = finish(std::move(bin));
  }
  return node;
}

expr_ptr parser::parse_math2() {
  expr_ptr node = parse_pow();
  while (true) {
    op_kind op = op_kind::none;
    for (const auto& m : math2_ops) {
      if (at_op(m.text)) op = m.op;
    }
    if (op == op_kind::none) return node;
    auto bin = make(expr_kind::binary, next().line);
    bin->op = op;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_pow());
    node = finish(std::move(bin));
  }
}

expr_ptr parser::parse_pow() {
  expr_ptr node = parse_unary(true);
  while (at_op("**")) {
    auto bin = make(expr_kind::binary, next().line);
    bin->op = op_kind::pow;
    bin->args.push_back(std::move(node));
    bin->args.push_back(parse_unary(true));
    node = finish(std::move(bin));
  }
  return node;
}

expr_ptr parser::parse_unary(bool with_filter) {
  nesting_guard guard(expression_nesting_, max_expression_depth, *this, peek().line);
  expr_ptr node;
  if (at_op("-") || at_op("+")) {
    auto un = make(expr_kind::unary, peek().line);
    un->op = next().text == "-" ? op_kind::neg : op_kind::pos;
    // As in Jinja, `-x | f` is `(-x) | f`: the operand takes no filters of its own.
    un->args.push_back(parse_unary(false));
    node = finish(std::move(un));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  return with_filter ? parse_filter_expr(std::move(node)) : std::move(node);
}

expr_ptr parser::parse_primary() {
  const token& t = next();
  switch (t.kind) {
    case token_kind::name: {
      auto node = make(expr_kind::literal, t.line);
      if (t.text == "true" || t.text == "True") {
        node->constant = value(true);
      } else if (t.text == "false" || t.text == "False") {
        node->constant = value(false);
      } else if (t.text == "none" || t.text == "None") {
        node->constant = value::none();
      } else {
        node->kind = expr_kind::name;
        node->name = t.text;
      }
      return finish(std::move(node));
    }
    case token_kind::string: {
      // Adjacent string literals concatenate, as in Python.
      std::string s = t.text;
      while (peek().kind == token_kind::string) s += next().text;
      auto node = make(expr_kind::literal, t.line);
      node->constant = value(std::move(s));
      return finish(std::move(node));
    }
    case token_kind::integer:
    case token_kind::floating: {
      auto node = make(expr_kind::literal, t.line);
      node->constant =
          t.kind == token_kind::integer ? value(t.int_value) : value(t.float_value);
      return finish(std::move(node));
    }
    case token_kind::op:
      if (t.text == "(") {
        if (at_op(")")) {
          next();
          return finish(make(expr_kind::list, t.line));  // the empty tuple
        }
        expr_ptr inner = parse_expression();
        if (!at_op(",")) {
          expect_op(")");
          return inner;
        }
        auto tuple = make(expr_kind::list, t.line);
        tuple->args.push_back(std::move(inner));
        while (at_op(",")) {
          next();
          if (at_op(")")) break;
          tuple->args.push_back(parse_expression());
        }
        expect_op(")");
        return finish(std::move(tuple));
      }
      if (t.text == "[") return parse_collection("]", t.line);
      if (t.text == "{") return parse_dict(t.line);
      break;
    default: break;
  }
  fail("unexpected " + describe(t) + " in an expression", t.line);
}

expr_ptr parser::parse_collection(std::string_view close, int line) {
  auto list = make(expr_kind::list, line);
  while (!at_op(close)) {
    list->args.push_back(parse_expression());
    if (!at_op(",")) break;
    next();
  }
  expect_op(close);
  return finish(std::move(list));
}

expr_ptr parser::parse_dict(int line) {
  auto dict = make(expr_kind::dict, line);
  while (!at_op("}")) {
    dict->args.push_back(parse_expression());
    expect_op(":");
    dict->args.push_back(parse_expression());
    if (!at_op(",")) break;
    next();
  }
  expect_op("}");
  return finish(std::move(dict));
}

expr_ptr parser::parse_postfix(expr_ptr node) {
  while (true) {
    if (at_op(".")) {
      const int line = next().line;
      const token& t = next();
      if (t.kind != token_kind::name && t.kind != token_kind::integer) {
        fail("expected an attribute name after '.', found " + describe(t), t.line);
      }
      auto attr = make(expr_kind::getattr, line);
      attr->name = t.text;
      if (t.kind == token_kind::integer) {
        attr->kind = expr_kind::getitem;  // x.0 is x[0]
        auto index = make(expr_kind::literal, line);
        index->constant = value(t.int_value);
        attr->args.push_back(std::move(node));
        attr->args.push_back(finish(std::move(index)));
      } else {
        attr->args.push_back(std::move(node));
      }
      node = finish(std::move(attr));
    } else if (at_op("[")) {
      node = parse_subscript(std::move(node));
    } else if (at_op("(")) {
      auto call = make(expr_kind::call, peek().line);
      call->args.push_back(std::move(node));
      parse_call_args(*call);
      node = finish(std::move(call));
    } else {
      return node;
    }
  }
}

expr_ptr parser::parse_subscript(expr_ptr node) {
  const int line = next().line;  // [
  expr_ptr start;
  if (!at_op(":")) start = parse_expression();
  if (!at_op(":")) {
    expect_op("]");
    auto item = make(expr_kind::getitem, line);
    item->args.push_back(std::move(node));
    item->args.push_back(std::move(start));
    return finish(std::move(item));
  }
  next();  // :
  auto slice = make(expr_kind::slice, line);
  slice->args.push_back(std::move(node));
  slice->args.push_back(std::move(start));
  slice->args.push_back(at_op("]") || at_op(":") ? nullptr : parse_expression());
  expr_ptr step;
  if (at_op(":")) {
    next();
    if (!at_op("]")) step = parse_expression();
  }
  slice->args.push_back(std::move(step));
  expect_op("]");
  return finish(std::move(slice));
}

expr_ptr parser::parse_filter_expr(expr_ptr node) {
  while (true) {
    if (at_op("|")) {
      next();
      node = parse_filter(std::move(node));
    } else if (at_name("is")) {
      node = parse_test(std::move(node));
    } else if (at_op("(") && node) {
      auto call = make(expr_kind::call, peek().line);
      call->args.push_back(std::move(node));
      parse_call_args(*call);
      node = finish(std::move(call));
    } else {
      return node;
    }
  }
}

expr_ptr parser::parse_filter(expr_ptr input) {
  const int line = peek().line;
  auto filter = make(expr_kind::filter, line);
  filter->name = expect_name("a filter name");
  filter->args.push_back(std::move(input));
  if (at_op("(")) parse_call_args(*filter);
  return finish(std::move(filter));
}

bool parser::starts_test_argument() const {
  const token& t = peek();
  switch (t.kind) {
    case token_kind::name:
      return t.text != "else" && t.text != "or" && t.text != "and" && t.text != "if" &&
             t.text != "is";
    case token_kind::string:
    case token_kind::integer:
    case token_kind::floating: return true;
    case token_kind::op: return t.text == "[" || t.text == "{";
    default: return false;
  }
}

expr_ptr parser::parse_test(expr_ptr input) {
  auto test = make(expr_kind::test, next().line);  // is
  if (at_name("not")) {
    next();
    test->negated = true;
  }
  test->name = expect_name("a test name after 'is'");
  test->args.push_back(std::move(input));
  if (at_op("(")) {
    parse_call_args(*test);
  } else if (starts_test_argument()) {
    // `x is divisibleby 3`, `x is sameas false`: one argument without parentheses.
    test->args.push_back(parse_postfix(parse_primary()));
  }
  return finish(std::move(test));
}

void parser::parse_call_args(expr& call) {
  next();  // (
  while (!at_op(")")) {
    if (at_op("*") || at_op("**")) fail("'*args' and '**kwargs' are not supported", peek().line);
    if (peek().kind == token_kind::name && peek(1).kind == token_kind::op && peek(1).text == "=") {
      std::string name = next().text;
      next();  // =
      call.kwargs.push_back({std::move(name), parse_expression()});
    } else {
      if (!call.kwargs.empty()) fail("positional argument after a keyword argument", peek().line);
      call.args.push_back(parse_expression());
    }
    if (!at_op(",")) break;
    next();
  }
  expect_op(")");
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
  if (!at_op(op)) fail("expected '" + std::string(op) + "', found " + describe(peek()), peek().line);
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
    case token_kind::text: return "template text";
    case token_kind::var_begin: return "'{{'";
    case token_kind::var_end: return "'}}'";
    case token_kind::block_begin: return "'{%'";
    case token_kind::block_end: return "'%}'";
    case token_kind::string: return "a string";
    case token_kind::end_of_input: return "the end of the template";
    default: return "'" + t.text + "'";
  }
}

void parser::fail(const std::string& message, int line) const {
  throw template_error(message, line);
}

}  // namespace courier::text::jinja
