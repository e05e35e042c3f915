// The expression half of the evaluator.
#include "text/jinja/access.hpp"
#include "text/jinja/evaluator.hpp"
#include "text/jinja/filters.hpp"
#include "text/jinja/methods.hpp"
#include "text/jinja/operators.hpp"
#include "text/jinja/predicates.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

value evaluator::eval(const expr& e) {
  try {
    depth_guard guard(*this);
    state_.step();
    return eval_node(e);
  } catch (const template_error& err) {
    if (err.line() != 0) throw;
    throw template_error(err.message(), e.line);
  }
}

value evaluator::eval_node(const expr& e) {
  switch (e.kind) {
    case expr_kind::literal:
      return e.constant;
    case expr_kind::name:
      return lookup(e.name);
    case expr_kind::list: {
      std::vector<value> items;
      items.reserve(e.args.size());
      for (const auto& a : e.args) items.push_back(eval(*a));
      return value::array(std::move(items));
    }
    case expr_kind::dict: {
      object_data obj;
      for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
        const value key = eval(*e.args[i]);
        if (!key.is_string()) {
          throw template_error(std::string("mapping keys must be strings, got ") + type_name(key));
        }
        obj.set(key.as_string(), eval(*e.args[i + 1]));
      }
      return value::object(std::move(obj));
    }
    case expr_kind::getattr:
      return get_attribute(eval(*e.args[0]), e.name);
    case expr_kind::getitem: {
      const value obj = eval(*e.args[0]);
      // Indexing a string walks it (by code point).
      const value key = eval(*e.args[1]);
      if (obj.is_string()) state_.charge_read(obj.as_string().size());
      if (key.is_string()) state_.charge_read(key.as_string().size());  // a mapping's lookup
      return get_item(obj, key);
    }
    case expr_kind::slice: {
      const value obj = eval(*e.args[0]);
      auto bound = [this](const expr_ptr& b) { return b ? eval(*b) : value(); };
      return slice_value(obj, bound(e.args[1]), bound(e.args[2]), bound(e.args[3]), state_);
    }
    case expr_kind::call:
      return eval_call(e);
    case expr_kind::filter:
      if (!e.args[0]) throw template_error("a filter needs a value to apply to");
      return apply_filter(e, eval(*e.args[0]));
    case expr_kind::test:
      return value(eval_test(e));
    case expr_kind::unary:
      return unary_op(e.op, eval(*e.args[0]));
    case expr_kind::binary: {
      if (e.op == op_kind::and_ || e.op == op_kind::or_) {
        value left = eval(*e.args[0]);
        if (truthy(left) == (e.op == op_kind::or_)) return left;
        return eval(*e.args[1]);
      }
      const value left = eval(*e.args[0]);
      return binary_op(e.op, left, eval(*e.args[1]), state_);
    }
    case expr_kind::compare: {
      value left = eval(*e.args[0]);
      for (std::size_t i = 0; i < e.ops.size(); ++i) {
        value right = eval(*e.args[i + 1]);
        if (!compare_op(e.ops[i], left, right, state_)) return value(false);
        left = std::move(right);
      }
      return value(true);
    }
    case expr_kind::cond:
      if (truthy(eval(*e.args[1]))) return eval(*e.args[0]);
      return e.args[2] ? eval(*e.args[2]) : value();
  }
  return value();
}

value evaluator::eval_call(const expr& e) {
  const expr& callee = *e.args[0];
  if (callee.kind == expr_kind::getattr) {
    // obj.name(...): a function stored under that key (loop.cycle, a macro in a namespace),
    // else a built-in method of obj's type.
    const value obj = eval(*callee.args[0]);
    const call_args args = eval_args(e, 1);
    if (obj.is_object()) {
      const value* fn = obj.as_object().find(callee.name);
      if (fn != nullptr && fn->is_function()) return fn->as_function().call(args, state_);
    }
    if (auto result = call_method(obj, callee.name, args, state_)) return std::move(*result);
    throw template_error(std::string(type_name(obj)) + " has no method '" + callee.name + "'");
  }
  const value fn = eval(callee);
  if (!fn.is_function()) {
    if (callee.kind == expr_kind::name && fn.is_undefined()) {
      throw template_error("unknown function '" + callee.name + "'");
    }
    throw template_error(std::string(type_name(fn)) + " is not callable");
  }
  return fn.as_function().call(eval_args(e, 1), state_);
}

value evaluator::apply_filter(const expr& filter, value input) {
  const filter_fn f = find_filter(filter.name);
  if (f == nullptr) throw template_error("unknown filter '" + filter.name + "'");
  // A filter reads its input at most once over: a string's length is the work to count.
  if (input.is_string()) state_.charge_read(input.as_string().size());
  value result = f(input, eval_args(filter, 1), state_);
  // Text filters copy their input; the copy is work too.
  if (result.is_string()) state_.charge_text(result.as_string().size());
  return result;
}

value evaluator::apply_filter_chain(const expr& chain, value input) {
  if (chain.kind != expr_kind::filter) {
    throw template_error("only filters may be applied to a block");
  }
  value inner =
      chain.args[0] ? apply_filter_chain(*chain.args[0], std::move(input)) : std::move(input);
  return apply_filter(chain, std::move(inner));
}

bool evaluator::eval_test(const expr& e) {
  const predicate_fn test = find_predicate(e.name);
  if (test == nullptr) throw template_error("unknown test '" + e.name + "'");
  const value v = eval(*e.args[0]);
  return test(v, eval_args(e, 1), state_) != e.negated;
}

call_args evaluator::eval_args(const expr& e, std::size_t first) {
  call_args args;
  args.positional.reserve(e.args.size() - first);
  for (std::size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i]));
  for (const auto& kw : e.kwargs) args.keyword.emplace_back(kw.name, eval(*kw.value));
  state_.charge_read(args.text_bytes());  // built-ins may copy their string arguments
  return args;
}

}  // namespace courier::text::jinja
