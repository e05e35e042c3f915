#include "text/jinja/operators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "text/jinja/string_format.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

const char* spelling(op_kind op) {
  switch (op) {
    case op_kind::add:
      return "+";
    case op_kind::sub:
      return "-";
    case op_kind::mul:
      return "*";
    case op_kind::div:
      return "/";
    case op_kind::floordiv:
      return "//";
    case op_kind::mod:
      return "%";
    case op_kind::pow:
      return "**";
    case op_kind::concat:
      return "~";
    case op_kind::lt:
      return "<";
    case op_kind::le:
      return "<=";
    case op_kind::gt:
      return ">";
    case op_kind::ge:
      return ">=";
    default:
      return "?";
  }
}

[[noreturn]] void mismatch(op_kind op, const value& a, const value& b) {
  throw template_error(std::string("unsupported operand types for '") + spelling(op) +
                       "': " + type_name(a) + " and " + type_name(b));
}

// Integers for arithmetic: booleans are 0 and 1, as in Python.
bool is_integral(const value& v) {
  return v.is_int() || v.is_bool();
}
bool is_arith(const value& v) {
  return is_integral(v) || v.is_float();
}
std::int64_t int_of(const value& v) {
  return v.is_bool() ? v.as_bool() : v.as_int();
}
double float_of(const value& v) {
  return v.is_float() ? v.as_float() : static_cast<double>(int_of(v));
}

[[noreturn]] void overflow() {
  throw template_error("integer overflow");
}

std::int64_t checked_pow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) overflow();
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
  }
  return result;
}

value int_arith(op_kind op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  switch (op) {
    case op_kind::add:
      if (__builtin_add_overflow(x, y, &r)) overflow();
      return value(r);
    case op_kind::sub:
      if (__builtin_sub_overflow(x, y, &r)) overflow();
      return value(r);
    case op_kind::mul:
      if (__builtin_mul_overflow(x, y, &r)) overflow();
      return value(r);
    case op_kind::floordiv:
    case op_kind::mod: {
      if (y == 0) throw template_error("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == op_kind::mod) return value(0);
        overflow();
      }
      std::int64_t q = x / y;
      std::int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;  // floor, as Python
      return value(op == op_kind::floordiv ? q : m);
    }
    case op_kind::pow:
      if (y < 0) return value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      return value(checked_pow(x, y));
    default:
      return value();
  }
}

value float_arith(op_kind op, double x, double y) {
  switch (op) {
    case op_kind::add:
      return value(x + y);
    case op_kind::sub:
      return value(x - y);
    case op_kind::mul:
      return value(x * y);
    case op_kind::floordiv:
      if (y == 0) throw template_error("float floor division by zero");
      return value(std::floor(x / y));
    case op_kind::mod: {
      if (y == 0) throw template_error("float modulo by zero");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return value(m);
    }
    case op_kind::pow:
      if (x == 0 && y < 0) throw template_error("zero cannot be raised to a negative power");
      return value(std::pow(x, y));
    default:
      return value();
  }
}

value repeat(const value& seq, std::int64_t times, render_state& state) {
  const std::size_t n = seq.is_string() ? seq.as_string().size() : seq.as_array().size();
  if (times <= 0 || n == 0) return seq.is_string() ? value("") : value::array({});
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(times), n, &total)) total = UINT64_MAX;
  if (seq.is_string()) {
    state.charge_text(total);
    std::string out;
    out.reserve(total);
    for (std::int64_t i = 0; i < times; ++i) out += seq.as_string();
    return value(std::move(out));
  }
  state.charge_items(total);
  std::vector<value> out;
  out.reserve(total);
  for (std::int64_t i = 0; i < times; ++i) {
    out.insert(out.end(), seq.as_array().begin(), seq.as_array().end());
  }
  return value::array(std::move(out));
}

// `+` on strings and lists; std::nullopt for the numeric cases.
std::optional<value> add_sequences(const value& a, const value& b, render_state& state) {
  if (a.is_string() && b.is_string()) {
    state.charge_text(a.as_string().size() + b.as_string().size());
    return value(a.as_string() + b.as_string());
  }
  if ((a.is_string() && is_arith(b)) || (is_arith(a) && b.is_string())) {
    const std::string s = state.text(a) + state.text(b);
    state.charge_text(s.size());
    return value(s);
  }
  if (a.is_array() && b.is_array()) {
    state.charge_items(a.as_array().size() + b.as_array().size());
    std::vector<value> items = a.as_array();
    items.insert(items.end(), b.as_array().begin(), b.as_array().end());
    return value::array(std::move(items));
  }
  return std::nullopt;
}

bool contains(const value& container, const value& item, work_meter& meter) {
  switch (container.type()) {
    case value::kind::string:
      if (!item.is_string()) {
        throw template_error(std::string("'in <string>' needs a string on the left, got ") +
                             type_name(item));
      }
      meter.add(container.as_string().size() / 32);
      return container.as_string().find(item.as_string()) != std::string::npos;
    case value::kind::array:
      for (const value& v : container.as_array()) {
        if (equals(v, item, &meter)) return true;
      }
      return false;
    case value::kind::object:
      if (!item.is_string()) return false;
      meter.add(item.as_string().size() / 32);
      return container.as_object().find(item.as_string()) != nullptr;
    case value::kind::undefined:
      return false;
    default:
      throw template_error(std::string("'in' needs a string, list or mapping on the right, got ") +
                           type_name(container));
  }
}

}  // namespace

value unary_op(op_kind op, const value& operand) {
  if (op == op_kind::not_) return value(!truthy(operand));
  if (!is_arith(operand)) {
    throw template_error(std::string("bad operand type for unary ") +
                         (op == op_kind::neg ? "-" : "+") + ": " + type_name(operand));
  }
  if (op == op_kind::pos) return operand.is_bool() ? value(int_of(operand)) : operand;
  if (operand.is_float()) return value(-operand.as_float());
  if (int_of(operand) == INT64_MIN) overflow();
  return value(-int_of(operand));
}

value binary_op(op_kind op, const value& a, const value& b, render_state& state) {
  if (op == op_kind::concat) {
    const std::string s = state.text(a) + state.text(b);
    state.charge_text(s.size());
    return value(s);
  }
  if (op == op_kind::add) {
    if (auto joined = add_sequences(a, b, state)) return std::move(*joined);
  }
  if (op == op_kind::mul) {
    if ((a.is_string() || a.is_array()) && is_integral(b)) return repeat(a, int_of(b), state);
    if (is_integral(a) && (b.is_string() || b.is_array())) return repeat(b, int_of(a), state);
  }
  if (op == op_kind::mod && a.is_string()) {
    const std::string s =
        percent_format(a.as_string(), b.is_array() ? b.as_array() : std::vector<value>{b}, state);
    state.charge_text(s.size());
    return value(s);
  }
  if (!is_arith(a) || !is_arith(b)) mismatch(op, a, b);
  if (op == op_kind::div) {
    if (float_of(b) == 0) throw template_error("division by zero");
    return value(float_of(a) / float_of(b));
  }
  if (is_integral(a) && is_integral(b)) return int_arith(op, int_of(a), int_of(b));
  return float_arith(op, float_of(a), float_of(b));
}

bool compare_op(op_kind op, const value& a, const value& b, render_state& state) {
  work_meter meter = state.meter();
  bool result = false;
  switch (op) {
    case op_kind::eq:
      result = equals(a, b, &meter);
      break;
    case op_kind::ne:
      result = !equals(a, b, &meter);
      break;
    case op_kind::in:
      result = contains(b, a, meter);
      break;
    case op_kind::not_in:
      result = !contains(b, a, meter);
      break;
    default: {
      if (a.is_undefined() || b.is_undefined() || a.is_none() || b.is_none()) mismatch(op, a, b);
      const int c = compare(a, b, &meter);
      result = op == op_kind::lt   ? c < 0
               : op == op_kind::le ? c <= 0
               : op == op_kind::gt ? c > 0
                                   : c >= 0;
    }
  }
  state.charge(meter);
  return result;
}

}  // namespace courier::text::jinja
