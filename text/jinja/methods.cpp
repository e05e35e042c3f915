#include "text/jinja/methods.hpp"

#include <algorithm>

#include "text/jinja/filters.hpp"
#include "text/jinja/string_format.hpp"
#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_letter(char c) {
  return is_upper(c) || is_lower(c) || static_cast<unsigned char>(c) >= 0x80;
}
using utf8::is_digit;

value strip(const std::string& s, const call_args& a, bool left, bool right, const char* what) {
  a.expect(what, {"chars"});
  const value chars = a.get(0, "chars", value::none());
  if (chars.is_none()) return value(utf8::trim(s, left, right));
  return value(utf8::trim_chars(s, require_string(chars, what), left, right));
}

// Python's str.split / str.rsplit.
value split(const std::string& s, const call_args& a, bool from_right, render_state& st) {
  a.expect(from_right ? "rsplit" : "split", {"sep", "maxsplit"});
  const value sep = a.get(0, "sep", value::none());
  const std::int64_t max = require_int(a.get(1, "maxsplit", value(-1)), "split: maxsplit");
  std::vector<std::string> parts;
  if (sep.is_none()) {
    // Runs of whitespace separate; with maxsplit, the rest of the string (whitespace on its
    // far side kept) is the last part, as in Python.
    std::vector<std::pair<std::size_t, std::size_t>> words;
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t next = pos;
      if (utf8::is_space(utf8::decode(s, next))) {
        pos = next;
        continue;
      }
      const std::size_t begin = pos;
      while (pos < s.size()) {
        next = pos;
        if (utf8::is_space(utf8::decode(s, next))) break;
        pos = next;
      }
      words.emplace_back(begin, pos);
      st.charge_items(1);
    }
    const auto n = static_cast<std::int64_t>(words.size());
    const bool limited = max >= 0 && max < n;
    const std::int64_t whole = limited ? max : n;
    if (!from_right) {
      for (std::int64_t i = 0; i < whole; ++i) {
        const auto& w = words[static_cast<std::size_t>(i)];
        parts.push_back(s.substr(w.first, w.second - w.first));
      }
      if (limited) parts.push_back(s.substr(words[static_cast<std::size_t>(max)].first));
    } else {
      if (limited)
        parts.push_back(s.substr(0, words[static_cast<std::size_t>(n - max - 1)].second));
      for (std::int64_t i = n - whole; i < n; ++i) {
        const auto& w = words[static_cast<std::size_t>(i)];
        parts.push_back(s.substr(w.first, w.second - w.first));
      }
    }
  } else {
    const std::string d = require_string(sep, "split: sep");
    if (d.empty()) throw template_error("split: empty separator");
    if (!from_right) {
      std::size_t pos = 0;
      while (max < 0 || static_cast<std::int64_t>(parts.size()) < max) {
        const std::size_t hit = s.find(d, pos);
        if (hit == std::string::npos) break;
        parts.push_back(s.substr(pos, hit - pos));
        pos = hit + d.size();
        st.charge_items(1);
      }
      parts.push_back(s.substr(pos));
    } else {
      std::size_t end = s.size();
      while (max < 0 || static_cast<std::int64_t>(parts.size()) < max) {
        if (end < d.size()) break;
        const std::size_t hit = s.rfind(d, end - d.size());
        if (hit == std::string::npos) break;
        parts.push_back(s.substr(hit + d.size(), end - hit - d.size()));
        end = hit;
        st.charge_items(1);
      }
      parts.push_back(s.substr(0, end));
      std::reverse(parts.begin(), parts.end());
    }
  }
  std::vector<value> items;
  items.reserve(parts.size());
  for (auto& p : parts) items.emplace_back(std::move(p));
  return value::array(std::move(items));
}

value affix_test(const std::string& s, const call_args& a, bool prefix, render_state& st) {
  const char* what = prefix ? "startswith" : "endswith";
  a.expect(what, {prefix ? "prefix" : "suffix"});
  const value arg = a.get(0, prefix ? "prefix" : "suffix");
  auto test = [&](const value& v) {
    if (!v.is_string()) require_string(v, what);  // throws the type error
    const std::string& p = v.as_string();
    st.charge_read(p.size());
    if (p.size() > s.size()) return false;
    return prefix ? s.compare(0, p.size(), p) == 0
                  : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (arg.is_array()) return value(std::any_of(arg.as_array().begin(), arg.as_array().end(), test));
  return value(test(arg));
}

// Python's str.title: the first letter of each run of letters upper, the rest lower.
std::string python_title(const std::string& s) {
  std::string out = s;
  bool in_word = false;
  for (char& c : out) {
    if (is_upper(c) || is_lower(c)) {
      c = in_word ? utf8::to_lower(std::string(1, c))[0] : utf8::to_upper(std::string(1, c))[0];
      in_word = true;
    } else {
      in_word = static_cast<unsigned char>(c) >= 0x80 && in_word;
    }
  }
  return out;
}

template <typename Pred>
bool all_chars(const std::string& s, Pred p) {
  return !s.empty() && std::all_of(s.begin(), s.end(), p);
}

// str.upper, lower, title, capitalize.
value change_case(const std::string& s, std::string_view name, const call_args& a) {
  a.expect(name, {});
  if (name == "upper") return value(utf8::to_upper(s));
  if (name == "lower") return value(utf8::to_lower(s));
  if (name == "title") return value(python_title(s));
  std::string out = utf8::to_lower(s);
  if (!out.empty()) out[0] = utf8::to_upper(out.substr(0, 1))[0];
  return value(std::move(out));
}

// str.find, rfind, count, index: positions in characters, as Python counts them.
value find_method(const std::string& s, std::string_view name, const call_args& a) {
  a.expect(name, {"sub"});
  const std::string sub = require_string(a.get(0, "sub"), name);
  if (name == "count") {
    if (sub.empty()) return value(static_cast<std::int64_t>(utf8::length(s) + 1));
    std::int64_t n = 0;
    for (std::size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size()))
      ++n;
    return value(n);
  }
  const std::size_t at = name == "rfind" ? s.rfind(sub) : s.find(sub);
  if (at == std::string::npos && name == "index")
    throw template_error("index: substring not found");
  return value(at == std::string::npos
                   ? std::int64_t{-1}
                   : static_cast<std::int64_t>(utf8::length(s.substr(0, at))));
}

// str.join of a list of strings.
value join_method(const std::string& s, const call_args& a, render_state& st) {
  a.expect("join", {"iterable"});
  const value items = a.get(0, "iterable");
  if (!items.is_array())
    throw template_error(std::string("join: expected a list, got ") + type_name(items));
  std::string out;
  for (std::size_t i = 0; i < items.as_array().size(); ++i) {
    if (i > 0) out += s;
    out += require_string(items.as_array()[i], "join: item");
    st.check_text(out.size());
  }
  st.charge_text(out.size());
  return value(std::move(out));
}

// str.splitlines (on '\n').
value split_lines(const std::string& s, const call_args& a, render_state& st) {
  a.expect("splitlines", {});
  std::vector<value> lines;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = std::min(s.find('\n', start), s.size());
    st.charge_items(1);
    lines.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return value::array(std::move(lines));
}

std::optional<value> string_method(const std::string& s, std::string_view name, const call_args& a,
                                   render_state& st) {
  if (name == "strip") return strip(s, a, true, true, "strip");
  if (name == "lstrip") return strip(s, a, true, false, "lstrip");
  if (name == "rstrip") return strip(s, a, false, true, "rstrip");
  if (name == "split") return split(s, a, false, st);
  if (name == "rsplit") return split(s, a, true, st);
  if (name == "startswith") return affix_test(s, a, true, st);
  if (name == "endswith") return affix_test(s, a, false, st);
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    return change_case(s, name, a);
  }
  if (name == "replace") {
    return find_filter("replace")(value(s), a, st);  // the filter has str.replace's semantics
  }
  if (name == "find" || name == "rfind" || name == "count" || name == "index") {
    return find_method(s, name, a);
  }
  if (name == "join") return join_method(s, a, st);
  if (name == "format") {
    std::string out = brace_format(s, a, st);
    st.charge_text(out.size());
    return value(std::move(out));
  }
  if (name == "splitlines") return split_lines(s, a, st);
  if (name == "isdigit") return value(all_chars(s, is_digit));
  if (name == "isalpha") return value(all_chars(s, is_letter));
  if (name == "isalnum")
    return value(all_chars(s, [](char c) { return is_letter(c) || is_digit(c); }));
  if (name == "isspace") return value(!s.empty() && utf8::trim(s, true, false).empty());
  if (name == "islower" || name == "isupper") {
    const bool upper = name == "isupper";
    const bool any = std::any_of(s.begin(), s.end(), upper ? is_upper : is_lower);
    const bool wrong = std::any_of(s.begin(), s.end(), upper ? is_lower : is_upper);
    return value(any && !wrong);
  }
  return std::nullopt;
}

std::optional<value> mapping_method(const value& obj, std::string_view name, const call_args& a,
                                    render_state& st) {
  const object_data& o = obj.as_object();
  if (name == "get") {
    a.expect("get", {"key", "default"});
    const value key = a.get(0, "key");
    const value* v = key.is_string() ? o.find(key.as_string()) : nullptr;
    return v != nullptr ? *v : a.get(1, "default", value::none());
  }
  if (name != "items" && name != "keys" && name != "values") return std::nullopt;
  a.expect(name, {});
  st.charge_items(o.size());
  std::vector<value> out;
  for (const auto& [k, v] : o.entries()) {
    if (name == "items") out.push_back(value::array({value(k), v}));
    if (name == "keys") out.emplace_back(k);
    if (name == "values") out.push_back(v);
  }
  return value::array(std::move(out));
}

}  // namespace

std::optional<value> call_method(const value& obj, std::string_view name, const call_args& args,
                                 render_state& state) {
  if (obj.is_string()) {
    // Every string method reads or copies at most the whole string (join and format charge
    // their own output): that is the work to count.
    state.charge_read(obj.as_string().size());
    return string_method(obj.as_string(), name, args, state);
  }
  if (obj.is_mapping()) return mapping_method(obj, name, args, state);
  if (obj.is_array() && (name == "index" || name == "count")) {
    args.expect(name, {"value"});
    const value x = args.get(0, "value");
    const auto& items = obj.as_array();
    work_meter meter = state.meter();
    std::int64_t hits = 0;
    std::int64_t first = -1;
    for (std::size_t i = 0; i < items.size() && (name == "count" || first < 0); ++i) {
      if (equals(items[i], x, &meter)) {
        ++hits;
        if (first < 0) first = static_cast<std::int64_t>(i);
      }
    }
    state.charge(meter);
    if (name == "count") return value(hits);
    if (first < 0) throw template_error("index: value is not in the list");
    return value(first);
  }
  return std::nullopt;
}

}  // namespace courier::text::jinja
