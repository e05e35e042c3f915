#include "text/jinja/value.hpp"

#include <algorithm>
#include <cmath>

#include "text/jinja/json_text.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

// A mapping this small is searched linearly; beyond it, through `index_`.
constexpr std::size_t linear_lookup_max = 16;

int child_depth(const std::vector<value>& items) {
  int d = 0;
  for (const value& v : items) d = std::max(d, v.depth());
  return d;
}

void check_depth(int depth) {
  if (depth > max_value_depth) {
    throw template_error("value nested deeper than " + std::to_string(max_value_depth) + " levels");
  }
}

double numeric(const value& v) {
  if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
  if (v.is_int()) return static_cast<double>(v.as_int());
  return v.as_float();
}

bool is_numeric(const value& v) {
  return v.is_bool() || v.is_number();
}

void count_work(const value& a, const value& b, work_meter* meter) {
  if (meter == nullptr) return;
  std::uint64_t n = 1;
  if (a.is_string() && b.is_string())
    n += std::min(a.as_string().size(), b.as_string().size()) / 32;
  meter->add(n);
}

bool equals_at(const value& a, const value& b, int depth, work_meter* meter) {
  if (depth > max_value_depth) throw template_error("value nested too deeply to compare");
  count_work(a, b, meter);
  if (is_numeric(a) && is_numeric(b)) {
    if (a.is_float() || b.is_float()) return numeric(a) == numeric(b);
    const std::int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const std::int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x == y;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case value::kind::undefined:
    case value::kind::none:
      return true;
    case value::kind::string:
      return &a.as_string() == &b.as_string() || a.as_string() == b.as_string();
    case value::kind::array: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (&x == &y) return true;
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!equals_at(x[i], y[i], depth + 1, meter)) return false;
      }
      return true;
    }
    case value::kind::object: {
      const object_data& x = a.as_object();
      const object_data& y = b.as_object();
      if (&x == &y) return true;
      if (x.is_namespace || y.is_namespace || x.size() != y.size()) return false;
      for (const auto& [key, v] : x.entries()) {
        if (meter != nullptr) meter->add(key.size() / 32);
        const value* w = y.find(key);
        if (w == nullptr || !equals_at(v, *w, depth + 1, meter)) return false;
      }
      return true;
    }
    case value::kind::function:
      return &a.as_function() == &b.as_function();
    default:
      return false;
  }
}

int compare_at(const value& a, const value& b, int depth, work_meter* meter) {
  if (depth > max_value_depth) throw template_error("value nested too deeply to compare");
  count_work(a, b, meter);
  if (is_numeric(a) && is_numeric(b)) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    const double x = numeric(a);
    const double y = numeric(b);
    // NaN sorts last and equal to itself, keeping sort's ordering strict and weak.
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) - std::isnan(y);
    return x < y ? -1 : x > y;
  }
  if (a.is_string() && b.is_string()) {
    // char_traits<char> compares bytes as unsigned, so this is code point order.
    const int c = a.as_string().compare(b.as_string());
    return (c > 0) - (c < 0);
  }
  if (a.is_array() && b.is_array()) {
    const auto& x = a.as_array();
    const auto& y = b.as_array();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (const int c = compare_at(x[i], y[i], depth + 1, meter); c != 0) return c;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  throw template_error(std::string("cannot compare ") + type_name(a) + " with " + type_name(b));
}

}  // namespace

value value::array(std::vector<value> items) {
  auto data = std::make_shared<array_data>();
  data->depth = 1 + child_depth(items);
  check_depth(data->depth);
  data->items = std::move(items);
  value v;
  v.data_ = array_ptr(std::move(data));
  return v;
}

value value::object(object_data data) {
  int d = 0;
  for (const auto& e : data.entries()) d = std::max(d, e.second.depth());
  data.depth = 1 + d;
  check_depth(data.depth);
  value v;
  v.data_ = std::make_shared<object_data>(std::move(data));
  return v;
}

value value::function(std::string name,
                      std::function<value(const call_args&, render_state&)> call) {
  value v;
  v.data_ = std::make_shared<const function_data>(function_data{std::move(name), std::move(call)});
  return v;
}

bool value::is_namespace() const {
  return is_object() && as_object().is_namespace;
}

const std::vector<value>& value::as_array() const {
  return std::get<array_ptr>(data_)->items;
}

int value::depth() const {
  if (is_array()) return std::get<array_ptr>(data_)->depth;
  // A namespace's contents can change after it is stored, so it counts as a leaf here; the
  // walkers' own depth checks cover what it holds.
  if (is_object()) return as_object().is_namespace ? 1 : as_object().depth;
  return 0;
}

const value* object_data::find(std::string_view key) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (const auto& e : entries_) {
    if (e.first == key) return &e.second;
  }
  return nullptr;
}

void object_data::set(std::string key, value v) {
  if (index_.empty()) {
    for (auto& e : entries_) {
      if (e.first == key) {
        e.second = std::move(v);
        return;
      }
    }
  } else if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].second = std::move(v);
    return;
  }
  append(std::move(key), std::move(v));
}

void object_data::append(std::string key, value v) {
  entries_.emplace_back(std::move(key), std::move(v));
  if (!index_.empty()) {
    index_.emplace(entries_.back().first, entries_.size() - 1);
  } else if (entries_.size() > linear_lookup_max) {
    for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  }
}

void object_data::clear() {
  entries_.clear();
  index_.clear();
}

bool truthy(const value& v) {
  switch (v.type()) {
    case value::kind::undefined:
    case value::kind::none:
      return false;
    case value::kind::boolean:
      return v.as_bool();
    case value::kind::integer:
      return v.as_int() != 0;
    case value::kind::floating:
      return v.as_float() != 0;
    case value::kind::string:
      return !v.as_string().empty();
    case value::kind::array:
      return !v.as_array().empty();
    case value::kind::object:
      return v.is_namespace() || v.as_object().size() > 0;
    case value::kind::function:
      return true;
  }
  return false;
}

void work_meter::add(std::uint64_t n) {
  used += n;
  if (used > limit) {
    throw template_error(
        "the template did more than its limit of steps of work (an unbounded loop?)");
  }
}

bool equals(const value& a, const value& b, work_meter* meter) {
  return equals_at(a, b, 0, meter);
}

int compare(const value& a, const value& b, work_meter* meter) {
  return compare_at(a, b, 0, meter);
}

const char* type_name(const value& v) {
  switch (v.type()) {
    case value::kind::undefined:
      return "undefined";
    case value::kind::none:
      return "none";
    case value::kind::boolean:
      return "boolean";
    case value::kind::integer:
      return "integer";
    case value::kind::floating:
      return "float";
    case value::kind::string:
      return "string";
    case value::kind::array:
      return "list";
    case value::kind::object:
      return v.is_namespace() ? "namespace" : "mapping";
    case value::kind::function:
      return "function";
  }
  return "value";
}

std::string to_text(const value& v, std::size_t max_bytes) {
  switch (v.type()) {
    case value::kind::undefined:
    case value::kind::none:
      return "";
    case value::kind::boolean:
      return v.as_bool() ? "true" : "false";
    case value::kind::integer:
      return std::to_string(v.as_int());
    case value::kind::floating: {
      const double d = v.as_float();
      if (d == 0 && std::signbit(d)) return "-0.0";
      std::string s = format_js_number(d);
      if (std::isfinite(d) && d == std::floor(d) && s.find('e') == std::string::npos) s += ".0";
      return s;
    }
    case value::kind::string:
      return v.as_string();
    case value::kind::array:
    case value::kind::object: {
      json_style style;
      style.max_bytes = max_bytes;
      return to_json_text(v, style);
    }
    case value::kind::function:
      throw template_error("cannot print function '" + v.as_function().name + "'");
  }
  return "";
}

namespace {

value from_json_at(const nlohmann::ordered_json& j, int depth) {
  if (depth > max_value_depth) {
    throw template_error("context nested deeper than " + std::to_string(max_value_depth) +
                         " levels");
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return value(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) return value(static_cast<std::int64_t>(u));
      return value(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: {
      const double d = j.get<double>();
      // 2^53: the integers a double represents exactly, as JavaScript's Number.isInteger sees.
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740992.0) {
        return value(static_cast<std::int64_t>(d));
      }
      return value(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return value(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json_at(e, depth + 1));
      return value::array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      object_data obj;
      obj.reserve(j.size());
      for (const auto& [key, e] : j.items()) obj.set(key, from_json_at(e, depth + 1));
      return value::object(std::move(obj));
    }
    default:
      return value::none();  // binary and discarded values do not come from JSON text
  }
}

}  // namespace

value from_json(const nlohmann::ordered_json& j) {
  return from_json_at(j, 0);
}

}  // namespace courier::text::jinja
