#include "text/jinja/globals.hpp"

#include <ctime>
#include <unordered_map>

#include "text/jinja/call_args.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

value range(const call_args& a, render_state& st) {
  if (!a.keyword.empty() || a.positional.empty() || a.positional.size() > 3) {
    throw template_error("range expects 1 to 3 integer arguments");
  }
  std::int64_t start = 0, stop = 0, step = 1;
  if (a.positional.size() == 1) {
    stop = require_int(a.positional[0], "range");
  } else {
    start = require_int(a.positional[0], "range");
    stop = require_int(a.positional[1], "range");
    if (a.positional.size() == 3) step = require_int(a.positional[2], "range");
  }
  if (step == 0) throw template_error("range: step must not be zero");
  // The count, computed without overflow, is charged before anything is built.
  const bool up = step > 0;
  std::uint64_t count = 0;
  if (up ? stop > start : stop < start) {
    const std::uint64_t span =
        up ? static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start)
           : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop);
    const std::uint64_t stride =
        up ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
    count = span / stride + (span % stride != 0);
  }
  st.charge_items(count);
  std::vector<value> items;
  items.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    // Wrapping unsigned arithmetic: the true value always lies between start and stop.
    items.emplace_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                                 i * static_cast<std::uint64_t>(step)));
  }
  return value::array(std::move(items));
}

object_data keyword_object(const call_args& a, const char* what, render_state& st) {
  if (a.positional.size() > 1)
    throw template_error(std::string(what) + " takes at most one positional argument");
  object_data obj;
  if (a.positional.size() == 1) {
    const value& init = a.positional[0];
    if (!init.is_mapping()) {
      throw template_error(std::string(what) + ": expected a mapping, got " + type_name(init));
    }
    for (const auto& [k, v] : init.as_object().entries()) obj.set(k, v);
  }
  for (const auto& [k, v] : a.keyword) obj.set(k, v);
  st.charge_items(obj.size());
  return obj;
}

value strftime_now(const call_args& a, render_state& st) {
  a.expect("strftime_now", {"format"});
  const std::string format = require_string(a.get(0, "format"), "strftime_now");
  if (format.size() > 256) throw template_error("strftime_now: format longer than 256 bytes");
  const std::time_t now = st.now();
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[4096];
  const std::size_t n =
      format.empty() ? 0 : std::strftime(buffer, sizeof buffer, format.c_str(), &local);
  if (n == 0 && !format.empty())
    throw template_error("strftime_now: the formatted date is too long");
  return value(std::string(buffer, n));
}

const std::unordered_map<std::string_view, value>& table() {
  static const std::unordered_map<std::string_view, value> globals = {
      {"range", value::function("range", range)},
      {"namespace", value::function("namespace",
                                    [](const call_args& a, render_state& st) {
                                      return st.make_namespace(keyword_object(a, "namespace", st));
                                    })},
      {"dict", value::function("dict",
                               [](const call_args& a, render_state& st) {
                                 return value::object(keyword_object(a, "dict", st));
                               })},
      {"raise_exception", value::function("raise_exception",
                                          [](const call_args& a, render_state& st) -> value {
                                            throw template_error(a.positional.empty()
                                                                     ? "raise_exception called"
                                                                     : st.text(a.positional[0]));
                                          })},
      {"strftime_now", value::function("strftime_now", strftime_now)},
  };
  return globals;
}

}  // namespace

const value* find_global(std::string_view name) {
  const auto& globals = table();
  const auto it = globals.find(name);
  return it == globals.end() ? nullptr : &it->second;
}

}  // namespace courier::text::jinja
