// Reading values: attribute and item access, slicing, and the items a loop walks.
#include "text/jinja/access.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

// Integers for indexes: booleans are 0 and 1, as in Python.
bool is_integral(const value& v) {
  return v.is_int() || v.is_bool();
}
std::int64_t int_of(const value& v) {
  return v.is_bool() ? v.as_bool() : v.as_int();
}

}  // namespace

std::vector<value> items_of(const value& v, std::string_view what, render_state& state) {
  switch (v.type()) {
    case value::kind::array:
      state.charge_items(v.as_array().size());
      return v.as_array();
    case value::kind::undefined:
      return {};
    case value::kind::string: {
      const std::string& s = v.as_string();
      state.charge_items(utf8::length(s));
      std::vector<value> chars;
      for (std::size_t pos = 0; pos < s.size();) {
        const std::size_t start = pos;
        utf8::decode(s, pos);
        chars.emplace_back(s.substr(start, pos - start));
      }
      return chars;
    }
    case value::kind::object:
      if (!v.is_namespace()) {
        state.charge_items(v.as_object().size());
        std::vector<value> keys;
        for (const auto& e : v.as_object().entries()) keys.emplace_back(e.first);
        return keys;
      }
      [[fallthrough]];
    default:
      throw template_error(std::string(what) + ": cannot iterate over " + type_name(v));
  }
}

value get_attribute(const value& obj, std::string_view name) {
  if (obj.is_object()) {
    const value* v = obj.as_object().find(name);
    return v != nullptr ? *v : value();
  }
  return value();
}

value get_item(const value& obj, const value& key) {
  if (obj.is_object()) return key.is_string() ? get_attribute(obj, key.as_string()) : value();
  if (!is_integral(key) || !(obj.is_array() || obj.is_string())) return value();
  std::int64_t i = int_of(key);
  if (obj.is_array()) {
    const auto n = static_cast<std::int64_t>(obj.as_array().size());
    if (i < 0) i += n;
    return i >= 0 && i < n ? obj.as_array()[static_cast<std::size_t>(i)] : value();
  }
  const std::string& s = obj.as_string();
  if (utf8::is_ascii(s)) {
    const auto n = static_cast<std::int64_t>(s.size());
    if (i < 0) i += n;
    return i >= 0 && i < n ? value(s.substr(static_cast<std::size_t>(i), 1)) : value();
  }
  if (i < 0) i += static_cast<std::int64_t>(utf8::length(s));
  if (i < 0) return value();
  const std::size_t begin = utf8::offset_of(s, static_cast<std::size_t>(i));
  if (begin == s.size()) return value();
  std::size_t end = begin;
  utf8::decode(s, end);
  return value(s.substr(begin, end - begin));
}

value slice_value(const value& obj, const value& start, const value& stop, const value& step,
                  render_state& state) {
  if (!obj.is_array() && !obj.is_string()) {
    throw template_error(std::string("cannot slice ") + type_name(obj));
  }
  auto bound = [](const value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!is_integral(v)) throw template_error(std::string("slice ") + what + " must be an integer");
    return int_of(v);
  };
  const std::int64_t st = bound(step, "step").value_or(1);
  if (st == 0) throw template_error("slice step cannot be zero");
  if (obj.is_string()) state.charge_read(obj.as_string().size());  // the scans below
  const bool ascii = obj.is_string() && utf8::is_ascii(obj.as_string());
  std::vector<std::size_t> b;
  if (obj.is_string() && !ascii) {
    state.charge_items(obj.as_string().size());  // the offsets cost 8 bytes a byte at most
    b = utf8::boundaries(obj.as_string());
  }
  const auto n = static_cast<std::int64_t>(obj.is_array() ? obj.as_array().size()
                                           : ascii        ? obj.as_string().size()
                                                          : b.size() - 1);
  // Python's slice.indices(n).
  const std::int64_t lower = st > 0 ? 0 : -1;
  const std::int64_t upper = st > 0 ? n : n - 1;
  auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
    if (!v) return fallback;
    if (*v < 0) return std::max(*v + n, lower);
    return std::min(*v, upper);
  };
  const std::int64_t from = clamp(bound(start, "start"), st > 0 ? lower : upper);
  const std::int64_t to = clamp(bound(stop, "stop"), st > 0 ? upper : lower);
  // How many items the slice takes, without stepping (a huge step must not overflow).
  const std::uint64_t stride =
      st > 0 ? static_cast<std::uint64_t>(st) : 0 - static_cast<std::uint64_t>(st);
  const std::int64_t span = st > 0 ? to - from : from - to;
  const std::uint64_t count = span <= 0 ? 0 : (static_cast<std::uint64_t>(span) - 1) / stride + 1;
  auto index = [&](std::uint64_t k) {
    // k * stride < span <= n: no overflow.
    const auto offset = static_cast<std::int64_t>(k * stride);
    return static_cast<std::size_t>(st > 0 ? from + offset : from - offset);
  };
  if (obj.is_array()) {
    state.charge_items(count);
    std::vector<value> items;
    items.reserve(count);
    for (std::uint64_t k = 0; k < count; ++k) items.push_back(obj.as_array()[index(k)]);
    return value::array(std::move(items));
  }
  const std::string& s = obj.as_string();
  if (ascii && st == 1) {
    state.charge_text(count);
    return value(s.substr(static_cast<std::size_t>(from), count));
  }
  state.charge_text(ascii ? count : count * 4);
  std::string out;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::size_t i = index(k);
    if (ascii) {
      out += s[i];
    } else {
      out.append(s, b[i], b[i + 1] - b[i]);
    }
  }
  return value(std::move(out));
}

}  // namespace courier::text::jinja
