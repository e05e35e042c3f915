#pragma once
// The parsed template: statements holding expressions. Built once by the parser and never
// changed, so one parsed template serves any number of concurrent renders.
//
// Invariants: an expression's `depth` is 1 + its deepest operand's and is at most
// max_expression_depth, and blocks nest at most max_block_depth deep, so evaluating or
// destroying the tree recurses a bounded number of times.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "text/jinja/value.hpp"

namespace courier::text::jinja {

inline constexpr int max_expression_depth = 128;
inline constexpr int max_block_depth = 64;

enum class expr_kind : std::uint8_t {
  literal,  // `constant`
  name,     // a variable: `name`
  list,     // [a, b] and (a, b): `args` are the items
  dict,     // {k: v}: `args` alternate key, value
  getattr,  // args[0].name (an integer name, `x.0`, indexes a list)
  getitem,  // args[0][args[1]]
  slice,    // args[0][args[1]:args[2]:args[3]], each bound possibly null
  call,     // args[0](args[1..], kwargs)
  filter,   // args[0] | name(args[1..], kwargs); args[0] is null in a filter block's chain
  test,     // args[0] is [not] name(args[1..], kwargs)
  unary,    // op args[0]
  binary,   // args[0] op args[1]; `and`/`or` short-circuit
  compare,  // args[0] ops[0] args[1] ops[1] args[2] ...: a chain, as in Python
  cond,     // args[0] if args[1] else args[2]; args[2] may be null (undefined)
};

enum class op_kind : std::uint8_t {
  none,
  add,
  sub,
  mul,
  div,
  floordiv,
  mod,
  pow,
  concat,
  and_,
  or_,  // binary
  not_,
  neg,
  pos,  // unary
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  in,
  not_in,  // compare
};

struct expr;
using expr_ptr = std::unique_ptr<expr>;

struct keyword_arg {
  std::string name;
  expr_ptr value;
};

struct expr {
  expr_kind kind = expr_kind::literal;
  int line = 0;
  int depth = 1;
  op_kind op = op_kind::none;
  bool negated = false;  // test: `is not`
  std::string name;      // variable, attribute, filter or test name
  value constant;        // literal
  std::vector<expr_ptr> args;
  std::vector<keyword_arg> kwargs;
  std::vector<op_kind> ops;  // compare
};

enum class stmt_kind : std::uint8_t {
  text,          // `text`
  output,        // {{ value }}
  if_,           // branches, else_body
  for_,          // for targets in value [if condition] body [else else_body]
  set,           // set targets = value, or set targets[0].attr = value
  set_block,     // set targets[0] %}body{% endset
  macro,         // macro name(params) body
  filter_block,  // filter value(chain with a null input) body
  break_,
  continue_,
  block,  // a body run in place (`{% generation %}`)
};

struct stmt;
using stmt_ptr = std::unique_ptr<stmt>;
using stmt_list = std::vector<stmt_ptr>;

struct if_branch {
  expr_ptr condition;
  stmt_list body;
};

struct macro_param {
  std::string name;
  expr_ptr default_value;  // null: required
};

struct stmt {
  stmt_kind kind = stmt_kind::text;
  int line = 0;
  std::string text;                  // text; macro name
  std::vector<std::string> targets;  // for / set names (more than one: unpacking)
  std::string attr;                  // set ns.attr: the attribute
  expr_ptr value;
  expr_ptr condition;  // for ... if condition
  std::vector<if_branch> branches;
  stmt_list body;
  stmt_list else_body;
  std::vector<macro_param> params;
  bool uses_loop = false;  // for: the body mentions `loop`, so each iteration must build it
};

struct program {
  stmt_list body;
};

}  // namespace courier::text::jinja
