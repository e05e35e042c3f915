// The tests of Jinja's default environment that chat templates use. Types follow
// @huggingface/jinja: `iterable` is a list or a string (Jinja also counts mappings, and
// undefined), `mapping` is a mapping but not a namespace, `number` excludes booleans.
#include "text/jinja/predicates.hpp"

#include <unordered_map>

#include "text/jinja/operators.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

const value& operand(const call_args& args, std::string_view test) {
  args.expect(test, {"other"});
  const value* v = args.find(0, "other");
  if (v == nullptr) throw template_error("test '" + std::string(test) + "' needs an argument");
  return *v;
}

bool is_lower_or_upper(const value& v, bool upper, render_state& state) {
  if (!v.is_string()) return false;
  state.charge_read(v.as_string().size());
  for (char c : v.as_string()) {
    if (upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) return false;
  }
  return true;
}

template <op_kind Op>
bool compare_test(const value& v, const call_args& args, render_state& state) {
  return compare_op(Op, v, operand(args, "comparison"), state);
}

const std::unordered_map<std::string_view, predicate_fn>& table() {
  static const std::unordered_map<std::string_view, predicate_fn> tests = {
      {"defined",
       [](const value& v, const call_args&, render_state&) { return !v.is_undefined(); }},
      {"undefined",
       [](const value& v, const call_args&, render_state&) { return v.is_undefined(); }},
      {"none", [](const value& v, const call_args&, render_state&) { return v.is_none(); }},
      {"boolean", [](const value& v, const call_args&, render_state&) { return v.is_bool(); }},
      {"true",
       [](const value& v, const call_args&, render_state&) { return v.is_bool() && v.as_bool(); }},
      {"false",
       [](const value& v, const call_args&, render_state&) { return v.is_bool() && !v.as_bool(); }},
      {"integer", [](const value& v, const call_args&, render_state&) { return v.is_int(); }},
      {"float", [](const value& v, const call_args&, render_state&) { return v.is_float(); }},
      {"number", [](const value& v, const call_args&, render_state&) { return v.is_number(); }},
      {"string", [](const value& v, const call_args&, render_state&) { return v.is_string(); }},
      {"mapping", [](const value& v, const call_args&, render_state&) { return v.is_mapping(); }},
      {"iterable", [](const value& v, const call_args&,
                      render_state&) { return v.is_array() || v.is_string(); }},
      {"sequence", [](const value& v, const call_args&,
                      render_state&) { return v.is_array() || v.is_string() || v.is_mapping(); }},
      {"callable", [](const value& v, const call_args&, render_state&) { return v.is_function(); }},
      {"lower", [](const value& v, const call_args&,
                   render_state& st) { return is_lower_or_upper(v, false, st); }},
      {"upper", [](const value& v, const call_args&,
                   render_state& st) { return is_lower_or_upper(v, true, st); }},
      {"odd", [](const value& v, const call_args&,
                 render_state&) { return require_int(v, "test 'odd'") % 2 != 0; }},
      {"even", [](const value& v, const call_args&,
                  render_state&) { return require_int(v, "test 'even'") % 2 == 0; }},
      {"divisibleby",
       [](const value& v, const call_args& args, render_state&) {
         const std::int64_t d = require_int(operand(args, "divisibleby"), "test 'divisibleby'");
         if (d == 0) throw template_error("test 'divisibleby': division by zero");
         return d == -1 || require_int(v, "test 'divisibleby'") % d == 0;
       }},
      {"sameas",
       [](const value& v, const call_args& args, render_state&) {
         const value& o = operand(args, "sameas");
         // Identity: the same scalar, or the very same shared container.
         if (v.type() != o.type()) return false;
         if (v.is_array()) return &v.as_array() == &o.as_array();
         if (v.is_object()) return &v.as_object() == &o.as_object();
         if (v.is_string()) return &v.as_string() == &o.as_string();
         return equals(v, o);
       }},
      {"escaped", [](const value&, const call_args&, render_state&) { return false; }},
      {"in",
       [](const value& v, const call_args& args, render_state& state) {
         return compare_op(op_kind::in, v, operand(args, "in"), state);
       }},
      {"eq", compare_test<op_kind::eq>},
      {"equalto", compare_test<op_kind::eq>},
      {"==", compare_test<op_kind::eq>},
      {"ne", compare_test<op_kind::ne>},
      {"!=", compare_test<op_kind::ne>},
      {"lt", compare_test<op_kind::lt>},
      {"lessthan", compare_test<op_kind::lt>},
      {"<", compare_test<op_kind::lt>},
      {"le", compare_test<op_kind::le>},
      {"<=", compare_test<op_kind::le>},
      {"gt", compare_test<op_kind::gt>},
      {"greaterthan", compare_test<op_kind::gt>},
      {">", compare_test<op_kind::gt>},
      {"ge", compare_test<op_kind::ge>},
      {">=", compare_test<op_kind::ge>},
  };
  return tests;
}

}  // namespace

predicate_fn find_predicate(std::string_view name) {
  const auto& tests = table();
  const auto it = tests.find(name);
  return it == tests.end() ? nullptr : it->second;
}

}  // namespace courier::text::jinja
