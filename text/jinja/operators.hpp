#pragma once
// Jinja's operators on values, with Python's semantics where @huggingface/jinja agrees with
// it: integer arithmetic stays integral (overflow is an error, not a wrap), `//` and `%` floor
// towards negative infinity, `/` always gives a float. As in @huggingface/jinja, `+` also
// joins a string with a number ("a" + 1 is "a1"); `~` joins anything, undefined as "".
#include <string_view>

#include "text/jinja/ast.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

value unary_op(op_kind op, const value& operand);
// Arithmetic and `~`; throws template_error naming the operator and both types on a mismatch.
value binary_op(op_kind op, const value& a, const value& b, render_state& state);
// ==, !=, <, <=, >, >=, in, not in.
bool compare_op(op_kind op, const value& a, const value& b);

// obj.name: a mapping's or namespace's key; undefined for anything else.
value get_attribute(const value& obj, std::string_view name);
// obj[key]: a mapping's key, or a list's or string's item (negative counts from the end);
// undefined when there is none.
value get_item(const value& obj, const value& key);
// obj[start:stop:step] of a list or a string (by code point), each bound possibly undefined.
value slice_value(const value& obj, const value& start, const value& stop, const value& step,
                  render_state& state);

}  // namespace courier::text::jinja
