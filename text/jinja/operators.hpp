#pragma once
// Jinja's operators on values, with Python's semantics where @huggingface/jinja agrees with
// it: integer arithmetic stays integral (overflow is an error, not a wrap), `//` and `%` floor
// towards negative infinity, `/` always gives a float. As in @huggingface/jinja, `+` also
// joins a string with a number ("a" + 1 is "a1"); `~` joins anything, undefined as "".
#include "text/jinja/ast.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

value unary_op(op_kind op, const value& operand);
// Arithmetic and `~`; throws template_error naming the operator and both types on a mismatch.
value binary_op(op_kind op, const value& a, const value& b, render_state& state);
// ==, !=, <, <=, >, >=, in, not in.
bool compare_op(op_kind op, const value& a, const value& b, render_state& state);

}  // namespace courier::text::jinja
