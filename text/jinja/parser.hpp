#pragma once
// Tokens -> program, by recursive descent over Jinja's grammar: statements in parser.cpp,
// expressions in expression_parser.cpp. Operator precedence, loosest first:
//   `a if c else b`; or; and; not; == != < <= > >= in, not in (chained as in Python);
//   + -; ~; * / // %; **; unary - +; then postfix . [] (), filters | and tests `is`.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/ast.hpp"
#include "text/jinja/lexer.hpp"

namespace courier::text::jinja {

// Throws template_error with the line on any syntax error.
program parse_program(std::vector<token> tokens);

class parser {
 public:
  explicit parser(std::vector<token> tokens) : tokens_(std::move(tokens)) {}
  program parse();

 private:
  // Statements (parser.cpp).
  stmt_list parse_body(std::initializer_list<std::string_view> ends, std::string_view opener,
                       int opener_line);
  stmt_ptr parse_statement();
  stmt_ptr parse_if(int line);
  stmt_ptr parse_for(int line);
  stmt_ptr parse_set(int line);
  stmt_ptr parse_macro(int line);
  stmt_ptr parse_filter_block(int line);
  stmt_ptr parse_plain_block(int line, std::string_view opener, std::string_view closer);
  // Consumes `{% closer %}` after a body parse_body stopped at.
  void close_block(std::string_view closer);

  // Expressions (expression_parser.cpp).
  expr_ptr parse_expression(bool with_condition = true);
  expr_ptr parse_tuple_or_expression();  // `a, b` as a list (set's right-hand side)
  expr_ptr parse_condition();
  expr_ptr parse_or();
  expr_ptr parse_and();
  expr_ptr parse_not();
  expr_ptr parse_compare();
  expr_ptr parse_math1();
  expr_ptr parse_concat();
  expr_ptr parse_math2();
  expr_ptr parse_pow();
  expr_ptr parse_unary(bool with_filter);
  expr_ptr parse_primary();
  expr_ptr parse_collection(std::string_view close, int line);
  expr_ptr parse_dict(int line);
  expr_ptr parse_postfix(expr_ptr node);
  expr_ptr parse_call(expr_ptr callee);  // at its "(": callee(args)
  expr_ptr parse_subscript(expr_ptr node);
  expr_ptr parse_filter_expr(expr_ptr node);
  // `| name(args)` applied to `input` (null in a filter block).
  expr_ptr parse_filter(expr_ptr input);
  expr_ptr parse_test(expr_ptr input);
  void parse_call_args(expr& call);
  bool starts_test_argument() const;

  // Tokens.
  const token& peek(std::size_t ahead = 0) const;
  const token& next();
  bool at_op(std::string_view op) const;
  bool at_name(std::string_view name) const;
  void expect_op(std::string_view op);
  std::string expect_name(std::string_view what);
  void expect_block_end();
  static std::string describe(const token& t);
  [[noreturn]] void fail(const std::string& message, int line) const;

  // Nodes: make() starts one; finish() computes its depth and enforces the bound.
  static expr_ptr make(expr_kind kind, int line);
  expr_ptr finish(expr_ptr node) const;

  // Counts recursion into nested expressions and blocks; throws past the bound.
  class nesting_guard {
   public:
    nesting_guard(int& counter, int limit, const parser& p, int line);
    ~nesting_guard() { --counter_; }
    nesting_guard(const nesting_guard&) = delete;
    nesting_guard& operator=(const nesting_guard&) = delete;

   private:
    int& counter_;
  };

  std::vector<token> tokens_;
  std::size_t pos_ = 0;
  int expression_nesting_ = 0;
  int block_nesting_ = 0;
  int loop_depth_ = 0;  // enclosing for loops (in this macro): where break/continue may appear
};

}  // namespace courier::text::jinja
