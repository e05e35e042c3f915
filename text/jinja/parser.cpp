#include "text/jinja/parser.hpp"

#include <algorithm>

#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

constexpr std::string_view unsupported_statements[] = {
    "include", "import", "from", "extends", "block", "call", "with", "autoescape", "do", "trans"};

constexpr std::string_view closing_names[] = {"elif",          "else",     "endif",     "endfor",
                                              "endset",        "endmacro", "endfilter", "endraw",
                                              "endgeneration", "endblock", "endcall",   "endwith"};

template <typename Range>
bool contains(const Range& range, std::string_view s) {
  return std::find(std::begin(range), std::end(range), s) != std::end(range);
}

// Whether any expression in the tree names the variable `name` (conservatively: nested loops'
// own `loop` counts too). Recursion is bounded by the tree's depth bounds.
bool mentions(const expr* e, std::string_view name) {
  if (e == nullptr) return false;
  if (e->kind == expr_kind::name && e->name == name) return true;
  for (const auto& a : e->args) {
    if (mentions(a.get(), name)) return true;
  }
  for (const auto& k : e->kwargs) {
    if (mentions(k.value.get(), name)) return true;
  }
  return false;
}

bool mentions(const stmt_list& body, std::string_view name) {
  for (const auto& s : body) {
    if (mentions(s->value.get(), name) || mentions(s->condition.get(), name) ||
        mentions(s->body, name) || mentions(s->else_body, name)) {
      return true;
    }
    for (const auto& b : s->branches) {
      if (mentions(b.condition.get(), name) || mentions(b.body, name)) return true;
    }
    for (const auto& p : s->params) {
      if (mentions(p.default_value.get(), name)) return true;
    }
  }
  return false;
}

}  // namespace

program parse_program(std::vector<token> tokens) {
  return parser(std::move(tokens)).parse();
}

program parser::parse() {
  program p;
  p.body = parse_body({}, "", 0);
  return p;
}

stmt_list parser::parse_body(std::initializer_list<std::string_view> ends, std::string_view opener,
                             int opener_line) {
  stmt_list body;
  while (true) {
    const token& t = peek();
    switch (t.kind) {
      case token_kind::end_of_input:
        if (ends.size() != 0) {
          fail("'" + std::string(opener) + "' at line " + std::to_string(opener_line) +
                   " is never closed: missing '{% " + std::string(*(ends.end() - 1)) + " %}'",
               t.line);
        }
        return body;
      case token_kind::text: {
        auto s = std::make_unique<stmt>();
        s->kind = stmt_kind::text;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
        break;
      }
      case token_kind::var_begin: {
        auto s = std::make_unique<stmt>();
        s->kind = stmt_kind::output;
        s->line = next().line;
        s->value = parse_expression();
        if (peek().kind != token_kind::var_end) {
          fail("expected '}}', found " + describe(peek()), peek().line);
        }
        next();
        body.push_back(std::move(s));
        break;
      }
      case token_kind::block_begin: {
        const token& name = peek(1);
        if (name.kind == token_kind::name && contains(ends, name.text)) return body;
        if (ends.size() != 0 && name.kind == token_kind::name &&
            contains(closing_names, name.text)) {
          fail("found '{% " + name.text + " %}' where the '" + std::string(opener) + "' at line " +
                   std::to_string(opener_line) + " needs '{% " + std::string(*(ends.end() - 1)) +
                   " %}'",
               name.line);
        }
        body.push_back(parse_statement());
        break;
      }
      default:
        fail("unexpected " + describe(t), t.line);
    }
  }
}

stmt_ptr parser::parse_statement() {
  const int line = next().line;  // {%
  nesting_guard guard(block_nesting_, max_block_depth, *this, line);
  const token& name_token = next();
  if (name_token.kind != token_kind::name) {
    fail("expected a statement after '{%', found " + describe(name_token), line);
  }
  const std::string name = name_token.text;
  if (name == "if") return parse_if(line);
  if (name == "for") return parse_for(line);
  if (name == "set") return parse_set(line);
  if (name == "macro") return parse_macro(line);
  if (name == "filter") return parse_filter_block(line);
  if (name == "generation") return parse_plain_block(line, "generation", "endgeneration");
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) fail("'{% " + name + " %}' outside a for loop", line);
    expect_block_end();
    auto s = std::make_unique<stmt>();
    s->kind = name == "break" ? stmt_kind::break_ : stmt_kind::continue_;
    s->line = line;
    return s;
  }
  if (contains(closing_names, name)) fail("unexpected '{% " + name + " %}'", line);
  if (contains(unsupported_statements, name)) {
    fail("'{% " + name + " %}' is not supported in chat templates", line);
  }
  fail("unknown statement '" + name + "'", line);
}

stmt_ptr parser::parse_if(int line) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::if_;
  s->line = line;
  while (true) {
    if_branch branch;
    branch.condition = parse_expression();
    expect_block_end();
    branch.body = parse_body({"elif", "else", "endif"}, "if", line);
    s->branches.push_back(std::move(branch));
    next();  // {%
    const std::string keyword = next().text;
    if (keyword == "elif") continue;
    if (keyword == "else") {
      expect_block_end();
      s->else_body = parse_body({"endif"}, "if", line);
      close_block("endif");
    } else {
      expect_block_end();
    }
    return s;
  }
}

stmt_ptr parser::parse_for(int line) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::for_;
  s->line = line;
  const bool parenthesized = at_op("(");
  if (parenthesized) next();
  s->targets.push_back(expect_name("a loop variable"));
  while (at_op(",")) {
    next();
    s->targets.push_back(expect_name("a loop variable"));
  }
  if (parenthesized) expect_op(")");
  if (!at_name("in")) fail("expected 'in' in the for loop, found " + describe(peek()), peek().line);
  next();
  // Without the inline if, so that `for x in xs if cond` filters the loop.
  s->value = parse_expression(false);
  if (at_name("if")) {
    next();
    s->condition = parse_expression();
  }
  if (at_name("recursive")) fail("recursive for loops are not supported", peek().line);
  expect_block_end();
  ++loop_depth_;
  s->body = parse_body({"else", "endfor"}, "for", line);
  --loop_depth_;
  s->uses_loop = mentions(s->body, "loop");
  next();  // {%
  if (next().text == "else") {
    expect_block_end();
    s->else_body = parse_body({"endfor"}, "for", line);
    close_block("endfor");
  } else {
    expect_block_end();
  }
  return s;
}

stmt_ptr parser::parse_set(int line) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::set;
  s->line = line;
  s->targets.push_back(expect_name("a variable name"));
  if (at_op(".")) {
    next();
    s->attr = expect_name("an attribute name");
  } else {
    while (at_op(",")) {
      next();
      s->targets.push_back(expect_name("a variable name"));
    }
  }
  if (at_op("=")) {
    next();
    s->value = parse_tuple_or_expression();
    expect_block_end();
    return s;
  }
  if (s->targets.size() > 1 || !s->attr.empty()) {
    fail("expected '=' in the set statement, found " + describe(peek()), peek().line);
  }
  // A block set captures what its body renders, optionally through filters.
  s->kind = stmt_kind::set_block;
  if (at_op("|")) s->value = parse_filter_expr(nullptr);
  expect_block_end();
  s->body = parse_body({"endset"}, "set", line);
  close_block("endset");
  return s;
}

stmt_ptr parser::parse_macro(int line) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::macro;
  s->line = line;
  s->text = expect_name("a macro name");
  expect_op("(");
  while (!at_op(")")) {
    macro_param param;
    param.name = expect_name("a parameter name");
    if (at_op("=")) {
      next();
      param.default_value = parse_expression();
    }
    s->params.push_back(std::move(param));
    if (!at_op(",")) break;
    next();
  }
  expect_op(")");
  expect_block_end();
  const int outer_loops = loop_depth_;
  loop_depth_ = 0;
  s->body = parse_body({"endmacro"}, "macro", line);
  loop_depth_ = outer_loops;
  close_block("endmacro");
  return s;
}

stmt_ptr parser::parse_filter_block(int line) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::filter_block;
  s->line = line;
  // The chain starts without the `|` a filter expression has: `{% filter upper | trim %}`.
  s->value = parse_filter(nullptr);
  if (at_op("|")) s->value = parse_filter_expr(std::move(s->value));
  expect_block_end();
  s->body = parse_body({"endfilter"}, "filter", line);
  close_block("endfilter");
  return s;
}

stmt_ptr parser::parse_plain_block(int line, std::string_view opener, std::string_view closer) {
  auto s = std::make_unique<stmt>();
  s->kind = stmt_kind::block;
  s->line = line;
  expect_block_end();
  s->body = parse_body({closer}, opener, line);
  close_block(closer);
  return s;
}

void parser::close_block(std::string_view closer) {
  next();  // {%
  const token& t = next();
  if (t.text != closer) fail("expected '{% " + std::string(closer) + " %}'", t.line);
  expect_block_end();
}

parser::nesting_guard::nesting_guard(int& counter, int limit, const parser& p, int line)
    : counter_(counter) {
  if (++counter_ > limit) {
    --counter_;
    p.fail("template nested more than " + std::to_string(limit) + " levels deep", line);
  }
}

}  // namespace courier::text::jinja
