// The expression half of the parser (see parser.hpp for the precedence table).
#include "text/jinja/parser.hpp"

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
      node->constant = t.kind == token_kind::integer ? value(t.int_value) : value(t.float_value);
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
    default:
      break;
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

}  // namespace courier::text::jinja
