// Postfix expressions: attribute and item access, slices, calls, filters and tests.
#include "text/jinja/parser.hpp"

namespace courier::text::jinja {

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
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

expr_ptr parser::parse_call(expr_ptr callee) {
  auto call = make(expr_kind::call, peek().line);
  call->args.push_back(std::move(callee));
  parse_call_args(*call);
  return finish(std::move(call));
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
      node = parse_call(std::move(node));
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
    case token_kind::floating:
      return true;
    case token_kind::op:
      return t.text == "[" || t.text == "{";
    default:
      return false;
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

}  // namespace courier::text::jinja
