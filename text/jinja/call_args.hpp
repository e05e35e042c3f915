#pragma once
// The evaluated arguments of a call to a filter, test, method, global function or macro, and
// the checks every built-in applies to them, so that each names itself in its errors.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/jinja/value.hpp"

namespace courier::text::jinja {

struct call_args {
  std::vector<value> positional;
  std::vector<std::pair<std::string, value>> keyword;

  // Throws template_error unless the arguments fit `params`: at most that many positional,
  // keywords only from it and none also given by position. `what` names the callee.
  void expect(std::string_view what, std::initializer_list<std::string_view> params) const;
  // The argument for parameter number `index` called `name`, or nullptr when not given.
  const value* find(std::size_t index, std::string_view name) const;
  value get(std::size_t index, std::string_view name, value fallback = value()) const;
  // The bytes of the string arguments: what a built-in may read or copy, to be charged.
  std::size_t text_bytes() const;
};

// Typed argument readers: a wrong type is a template_error naming `what`.
std::string require_string(const value& v, std::string_view what);
std::int64_t require_int(const value& v, std::string_view what);  // booleans count as 0 and 1
double require_number(const value& v, std::string_view what);

}  // namespace courier::text::jinja
