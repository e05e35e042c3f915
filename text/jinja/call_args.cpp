#include "text/jinja/call_args.hpp"

#include <algorithm>

#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

void call_args::expect(std::string_view what,
                       std::initializer_list<std::string_view> params) const {
  if (positional.size() > params.size()) {
    throw template_error(std::string(what) + " takes at most " + std::to_string(params.size()) +
                         " argument(s), got " + std::to_string(positional.size()));
  }
  for (const auto& [name, v] : keyword) {
    const auto it = std::find(params.begin(), params.end(), name);
    if (it == params.end()) {
      throw template_error(std::string(what) + " got an unexpected keyword argument '" + name +
                           "'");
    }
    if (static_cast<std::size_t>(it - params.begin()) < positional.size()) {
      throw template_error(std::string(what) + " got argument '" + name + "' twice");
    }
  }
}

const value* call_args::find(std::size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [key, v] : keyword) {
    if (key == name) return &v;
  }
  return nullptr;
}

value call_args::get(std::size_t index, std::string_view name, value fallback) const {
  const value* v = find(index, name);
  return v != nullptr ? *v : fallback;
}

std::size_t call_args::text_bytes() const {
  std::size_t n = 0;
  for (const value& v : positional) n += v.is_string() ? v.as_string().size() : 0;
  for (const auto& [name, v] : keyword) n += v.is_string() ? v.as_string().size() : 0;
  return n;
}

std::string require_string(const value& v, std::string_view what) {
  if (!v.is_string()) {
    throw template_error(std::string(what) + ": expected a string, got " + type_name(v));
  }
  return v.as_string();
}

std::int64_t require_int(const value& v, std::string_view what) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  throw template_error(std::string(what) + ": expected an integer, got " + type_name(v));
}

double require_number(const value& v, std::string_view what) {
  if (v.is_float()) return v.as_float();
  return static_cast<double>(require_int(v, what));
}

}  // namespace courier::text::jinja
