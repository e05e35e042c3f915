// The filters on lists and mappings.
#include <algorithm>

#include "text/jinja/access.hpp"
#include "text/jinja/filters.hpp"
#include "text/jinja/operators.hpp"
#include "text/jinja/predicates.hpp"
#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

// `attribute="a.b.0"`: a dotted path through mappings and list indexes.
value attribute_path(const value& item, const std::string& path) {
  value v = item;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    const bool index = !part.empty() && part.size() < 19 &&
                       part.find_first_not_of("0123456789") == std::string::npos;
    v = index && v.is_array() ? get_item(v, value(static_cast<std::int64_t>(std::stoll(part))))
                              : get_attribute(v, part);
    if (dot == path.size()) return v;
    start = dot + 1;
  }
}

std::function<value(const value&)> key_getter(const call_args& a, std::size_t index) {
  const value attr = a.get(index, "attribute", value::none());
  if (attr.is_none()) return [](const value& v) { return v; };
  const std::string path =
      attr.is_int() ? std::to_string(attr.as_int()) : require_string(attr, "attribute");
  return [path](const value& v) { return attribute_path(v, path); };
}

// Jinja compares strings case-insensitively unless asked not to.
int compare_keys(const value& x, const value& y, bool case_sensitive, render_state& st) {
  work_meter meter = st.meter();
  int c = 0;
  if (!case_sensitive && x.is_string() && y.is_string()) {
    meter.add((x.as_string().size() + y.as_string().size()) / 32);  // the lowercased copies
    c = compare(value(utf8::to_lower(x.as_string())), value(utf8::to_lower(y.as_string())), &meter);
  } else {
    c = compare(x, y, &meter);
  }
  st.charge(meter);
  return c;
}

value f_length(const value& in, const call_args& a, render_state&) {
  a.expect("length", {});
  if (in.is_string()) return value(static_cast<std::int64_t>(utf8::length(in.as_string())));
  if (in.is_array()) return value(static_cast<std::int64_t>(in.as_array().size()));
  if (in.is_object()) return value(static_cast<std::int64_t>(in.as_object().size()));
  if (in.is_undefined()) return value(0);
  throw template_error(std::string("length: ") + type_name(in) + " has no length");
}

value f_first_last(const value& in, bool last, render_state& st) {
  if (in.is_array() || in.is_string()) return get_item(in, value(last ? -1 : 0));
  const std::vector<value> items = items_of(in, last ? "last" : "first", st);
  if (items.empty()) return value();
  return last ? items.back() : items.front();
}

value f_reverse(const value& in, const call_args& a, render_state& st) {
  a.expect("reverse", {});
  std::vector<value> items = items_of(in, "reverse", st);
  std::reverse(items.begin(), items.end());
  if (!in.is_string()) return value::array(std::move(items));
  std::string out;
  for (const value& c : items) out += c.as_string();
  return value(std::move(out));
}

value f_sort(const value& in, const call_args& a, render_state& st) {
  a.expect("sort", {"reverse", "case_sensitive", "attribute"});
  std::vector<value> items = items_of(in, "sort", st);
  const bool reverse = truthy(a.get(0, "reverse", value(false)));
  const bool case_sensitive = truthy(a.get(1, "case_sensitive", value(false)));
  const auto key = key_getter(a, 2);
  st.step(items.size() * 8);
  std::stable_sort(items.begin(), items.end(), [&](const value& x, const value& y) {
    const int c = compare_keys(key(x), key(y), case_sensitive, st);
    return reverse ? c > 0 : c < 0;
  });
  return value::array(std::move(items));
}

value f_unique(const value& in, const call_args& a, render_state& st) {
  a.expect("unique", {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(a.get(0, "case_sensitive", value(false)));
  const auto key = key_getter(a, 1);
  std::vector<value> kept;
  std::vector<value> seen;
  for (const value& item : items_of(in, "unique", st)) {
    value k = key(item);
    if (!case_sensitive && k.is_string()) k = value(utf8::to_lower(k.as_string()));
    work_meter meter = st.meter();
    const bool fresh = std::none_of(seen.begin(), seen.end(),
                                    [&](const value& s) { return equals(s, k, &meter); });
    st.charge(meter);
    if (fresh) {
      seen.push_back(k);
      kept.push_back(item);
    }
  }
  return value::array(std::move(kept));
}

value f_join(const value& in, const call_args& a, render_state& st) {
  a.expect("join", {"d", "attribute"});
  const std::string sep = require_string(a.get(0, "d", value("")), "join: separator");
  const value attr = a.get(1, "attribute", value::none());
  std::string out;
  bool first = true;
  for (const value& item : items_of(in, "join", st)) {
    if (!first) out += sep;
    first = false;
    out += st.text(attr.is_none() ? item : attribute_path(item, st.text(attr)));
    st.check_text(out.size());
  }
  st.charge_text(out.size());
  return value(std::move(out));
}

value pairs(const object_data& obj) {
  std::vector<value> items;
  for (const auto& [k, v] : obj.entries()) items.push_back(value::array({value(k), v}));
  return value::array(std::move(items));
}

value f_items(const value& in, const call_args& a, render_state& st) {
  a.expect("items", {});
  if (in.is_undefined()) return value::array({});
  if (!in.is_object())
    throw template_error(std::string("items: expected a mapping, got ") + type_name(in));
  st.charge_items(in.as_object().size());
  return pairs(in.as_object());
}

value f_dictsort(const value& in, const call_args& a, render_state& st) {
  a.expect("dictsort", {"case_sensitive", "by", "reverse"});
  if (!in.is_object())
    throw template_error(std::string("dictsort: expected a mapping, got ") + type_name(in));
  const bool case_sensitive = truthy(a.get(0, "case_sensitive", value(false)));
  const std::string by = require_string(a.get(1, "by", value("key")), "dictsort: by");
  if (by != "key" && by != "value") throw template_error("dictsort: by must be 'key' or 'value'");
  const bool reverse = truthy(a.get(2, "reverse", value(false)));
  std::vector<value> items = pairs(in.as_object()).as_array();
  const std::size_t at = by == "key" ? 0 : 1;
  st.step(items.size() * 8);
  std::stable_sort(items.begin(), items.end(), [&](const value& x, const value& y) {
    const int c = compare_keys(x.as_array()[at], y.as_array()[at], case_sensitive, st);
    return reverse ? c > 0 : c < 0;
  });
  return value::array(std::move(items));
}

value f_map(const value& in, const call_args& a, render_state& st) {
  std::vector<value> out;
  const value* attr = a.find(SIZE_MAX, "attribute");
  if (attr != nullptr) {
    if (!a.positional.empty())
      throw template_error("map: give a filter name or attribute=, not both");
    for (const auto& [name, v] : a.keyword) {
      if (name != "attribute" && name != "default")
        throw template_error("map: unexpected argument '" + name + "'");
    }
    const value fallback = a.get(SIZE_MAX, "default");
    const std::string path =
        attr->is_int() ? std::to_string(attr->as_int()) : require_string(*attr, "map: attribute");
    for (const value& item : items_of(in, "map", st)) {
      value v = attribute_path(item, path);
      out.push_back(v.is_undefined() ? fallback : v);
    }
  } else {
    if (a.positional.empty()) throw template_error("map: needs a filter name or attribute=");
    const std::string name = require_string(a.positional[0], "map: filter name");
    const filter_fn f = find_filter(name);
    if (f == nullptr) throw template_error("unknown filter '" + name + "'");
    call_args rest{{a.positional.begin() + 1, a.positional.end()}, a.keyword};
    for (const value& item : items_of(in, "map", st)) {
      // As the evaluator does for a filter it applies: count what it reads and builds.
      st.charge_read(rest.text_bytes() + (item.is_string() ? item.as_string().size() : 0));
      out.push_back(f(item, rest, st));
      if (out.back().is_string()) st.charge_text(out.back().as_string().size());
    }
  }
  st.charge_items(out.size());
  return value::array(std::move(out));
}

// select / reject / selectattr / rejectattr: keep the items whose (attribute) passes the test.
value filter_items(const value& in, const call_args& a, render_state& st, bool keep, bool by_attr) {
  const char* what = by_attr ? (keep ? "selectattr" : "rejectattr") : (keep ? "select" : "reject");
  if (!a.keyword.empty())
    throw template_error(std::string(what) + ": keyword arguments are not supported");
  std::size_t next = 0;
  std::string path;
  if (by_attr) {
    if (a.positional.empty()) throw template_error(std::string(what) + ": needs an attribute name");
    path = require_string(a.positional[next++], what);
  }
  predicate_fn test = nullptr;
  if (next < a.positional.size()) {
    const std::string name = require_string(a.positional[next++], what);
    test = find_predicate(name);
    if (test == nullptr) throw template_error("unknown test '" + name + "'");
  }
  const call_args test_args{
      {a.positional.begin() + static_cast<std::ptrdiff_t>(next), a.positional.end()}, {}};
  std::vector<value> out;
  for (const value& item : items_of(in, what, st)) {
    st.step();
    st.charge_read(test_args.text_bytes());
    const value subject = by_attr ? attribute_path(item, path) : item;
    const bool pass = test != nullptr ? test(subject, test_args, st) : truthy(subject);
    if (pass == keep) out.push_back(item);
  }
  return value::array(std::move(out));
}

value f_sum(const value& in, const call_args& a, render_state& st) {
  a.expect("sum", {"attribute", "start"});
  const value attr = a.get(0, "attribute", value::none());
  value total = a.get(1, "start", value(0));
  for (const value& item : items_of(in, "sum", st)) {
    total = binary_op(op_kind::add, total,
                      attr.is_none() ? item : attribute_path(item, st.text(attr)), st);
  }
  return total;
}

value f_min_max(const value& in, const call_args& a, bool max, render_state& st) {
  a.expect(max ? "max" : "min", {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(a.get(0, "case_sensitive", value(false)));
  const auto key = key_getter(a, 1);
  const std::vector<value> items = items_of(in, max ? "max" : "min", st);
  if (items.empty()) return value();
  const value* best = &items[0];
  for (const value& item : items) {
    const int c = compare_keys(key(item), key(*best), case_sensitive, st);
    if (max ? c > 0 : c < 0) best = &item;
  }
  return *best;
}

value f_list(const value& in, const call_args& a, render_state& st) {
  a.expect("list", {});
  std::vector<value> items = items_of(in, "list", st);
  return value::array(std::move(items));
}

}  // namespace

const std::vector<filter_entry>& collection_filters() {
  static const std::vector<filter_entry> filters = {
      {"length", f_length},
      {"count", f_length},
      {"first",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("first", {});
         return f_first_last(in, false, st);
       }},
      {"last",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("last", {});
         return f_first_last(in, true, st);
       }},
      {"list", f_list},
      {"reverse", f_reverse},
      {"sort", f_sort},
      {"unique", f_unique},
      {"join", f_join},
      {"items", f_items},
      {"dictsort", f_dictsort},
      {"map", f_map},
      {"select", [](const value& in, const call_args& a,
                    render_state& st) { return filter_items(in, a, st, true, false); }},
      {"reject", [](const value& in, const call_args& a,
                    render_state& st) { return filter_items(in, a, st, false, false); }},
      {"selectattr", [](const value& in, const call_args& a,
                        render_state& st) { return filter_items(in, a, st, true, true); }},
      {"rejectattr", [](const value& in, const call_args& a,
                        render_state& st) { return filter_items(in, a, st, false, true); }},
      {"sum", f_sum},
      {"min", [](const value& in, const call_args& a,
                 render_state& st) { return f_min_max(in, a, false, st); }},
      {"max", [](const value& in, const call_args& a,
                 render_state& st) { return f_min_max(in, a, true, st); }},
      {"attr",
       [](const value& in, const call_args& a, render_state&) {
         a.expect("attr", {"name"});
         return get_attribute(in, require_string(a.get(0, "name"), "attr: name"));
       }},
  };
  return filters;
}

}  // namespace courier::text::jinja
