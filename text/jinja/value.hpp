#pragma once
// A template value: what a Jinja expression evaluates to. Scalars are held inline; strings,
// lists, mappings and functions are shared and immutable, so copying a value is cheap and
// `messages[0]` never copies a message. The one mutable container is a namespace, whose
// attributes `{% set ns.x = ... %}` assigns; render_state clears every namespace when a render
// ends, which breaks any cycle a template built through one.
//
// Invariants: a list's or mapping's `depth` is 1 + the deepest list or mapping inside it (a
// namespace counts as 1) and never exceeds max_value_depth; walkers over values (tojson,
// equality, comparison) also stop at that depth, so no value can exhaust the stack.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace courier::text::jinja {

inline constexpr int max_value_depth = 256;

struct array_data;
class object_data;
struct function_data;
struct call_args;
class render_state;

class value {
 public:
  // The order matches the storage variant's alternatives.
  enum class kind { undefined, none, boolean, integer, floating, string, array, object, function };

  value() = default;  // undefined
  value(bool b) : data_(b) {}
  value(int i) : data_(static_cast<std::int64_t>(i)) {}
  value(std::int64_t i) : data_(i) {}
  value(double d) : data_(d) {}
  value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}
  value(const char* s) : value(std::string(s)) {}
  value(std::string_view s) : value(std::string(s)) {}

  static value none() { return value(nullptr); }
  // Throws template_error when the list would nest deeper than max_value_depth.
  static value array(std::vector<value> items);
  static value object(object_data data);
  static value function(std::string name,
                        std::function<value(const call_args&, render_state&)> call);

  kind type() const { return static_cast<kind>(data_.index()); }
  bool is_undefined() const { return type() == kind::undefined; }
  bool is_none() const { return type() == kind::none; }
  bool is_bool() const { return type() == kind::boolean; }
  bool is_int() const { return type() == kind::integer; }
  bool is_float() const { return type() == kind::floating; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return type() == kind::string; }
  bool is_array() const { return type() == kind::array; }
  bool is_object() const { return type() == kind::object; }
  bool is_namespace() const;
  bool is_mapping() const { return is_object() && !is_namespace(); }
  bool is_function() const { return type() == kind::function; }

  // Each accessor requires the matching type.
  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  const std::string& as_string() const { return *std::get<string_ptr>(data_); }
  const std::vector<value>& as_array() const;
  // Mutable only to assign namespace attributes; mappings are never changed once built.
  object_data& as_object() const { return *std::get<object_ptr>(data_); }
  const function_data& as_function() const { return *std::get<function_ptr>(data_); }

  // 1 + the depth of the deepest list or mapping inside, for a list or mapping; else 0.
  int depth() const;

 private:
  using string_ptr = std::shared_ptr<const std::string>;
  using array_ptr = std::shared_ptr<const array_data>;
  using object_ptr = std::shared_ptr<object_data>;
  using function_ptr = std::shared_ptr<const function_data>;

  explicit value(std::nullptr_t) : data_(nullptr) {}

  std::variant<std::monostate, std::nullptr_t, bool, std::int64_t, double, string_ptr, array_ptr,
               object_ptr, function_ptr>
      data_;
};

struct array_data {
  std::vector<value> items;
  int depth = 1;
};

// A mapping keeps its keys in insertion order, as @huggingface/jinja and Python dicts do, so
// `tojson` writes them back in the order the request gave them.
class object_data {
 public:
  const value* find(std::string_view key) const;
  void set(std::string key, value v);  // replaces in place, or appends
  // Appends without looking for `key`, which the caller knows is new (building a fresh mapping).
  void append(std::string key, value v);
  void reserve(std::size_t n) { entries_.reserve(n); }
  const std::vector<std::pair<std::string, value>>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  void clear();

  bool is_namespace = false;
  int depth = 1;

 private:
  std::vector<std::pair<std::string, value>> entries_;
  // Key -> position, kept only once a mapping outgrows a short linear scan.
  std::unordered_map<std::string, std::size_t> index_;
};

struct function_data {
  std::string name;
  std::function<value(const call_args&, render_state&)> call;
};

// Python truthiness: undefined, none, false, 0, 0.0, "" and empty lists and mappings are false.
bool truthy(const value& v);
// Counts the work of a comparison while it runs (one unit per pair of values, plus the bytes
// two strings compare / 32), so that comparing two long lists of long strings stops at the
// render's step bound instead of after it. render_state::meter makes one.
struct work_meter {
  std::uint64_t used = 0;
  std::uint64_t limit = UINT64_MAX;
  void add(std::uint64_t n);  // throws template_error past `limit`
};

// Python ==: numbers compare by value (true == 1), lists elementwise, mappings by key set; a
// value equals itself (the same shared list or string) without a walk, as in Python.
bool equals(const value& a, const value& b, work_meter* meter = nullptr);
// <0, 0, >0 for numbers (NaN sorts after every number), strings (by code point) and lists
// (lexicographically); anything else is a template_error.
int compare(const value& a, const value& b, work_meter* meter = nullptr);
// The type's name in error messages: "string", "list", "mapping", ...
const char* type_name(const value& v);

// What `{{ v }}` prints, following @huggingface/jinja: undefined and none print nothing,
// booleans print true/false, integral floats keep ".0", lists and mappings print as JSON.
// Text longer than `max_bytes` is a template_error (render_state::text charges for it too).
std::string to_text(const value& v, std::size_t max_bytes);

// A JSON value as a template value. Integral floats become integers, as JavaScript's numbers
// do in @huggingface/jinja, so `{"t": 1.0} | tojson` is {"t": 1} in both.
value from_json(const nlohmann::ordered_json& j);

}  // namespace courier::text::jinja
