// Numbers and integers of a JSON Schema, with their bounds, and JSON's number syntax itself.
//
// Integer bounds become exact grammars of digit strings (the idea of llama.cpp's
// `_generate_min_max_int`): [lo, hi] splits by number of digits, and digits of one length
// between two strings split at their first difference. Bounds are exact decimal strings, so
// any integer bound up to 20 digits works (int64 and uint64 alike).
//
// A bounded number (type number) is written without an exponent, and its bounds must be whole
// numbers: a number's integer part is then compared as an integer, its fraction only tells
// "zero" from "not zero". Other bounds are a grammar_error.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <optional>

#include "grammar/json_schema_internal.hpp"

namespace courier::grammar::json_schema_detail {

namespace {

// A whole number: digits without leading zeros ("0" for zero, never negative zero).
struct decimal {
  bool negative = false;
  std::string digits = "0";
};

bool is_zero(const decimal& d) {
  return d.digits == "0";
}

int compare_magnitudes(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

int compare(const decimal& a, const decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int m = compare_magnitudes(a.digits, b.digits);
  return a.negative ? -m : m;
}

std::string increment_magnitude(std::string d) {
  std::size_t i = d.size();
  while (i > 0 && d[i - 1] == '9') d[--i] = '0';
  if (i == 0) return "1" + d;
  ++d[i - 1];
  return d;
}

// d > 0.
std::string decrement_magnitude(std::string d) {
  std::size_t i = d.size();
  while (d[i - 1] == '0') d[--i] = '9';
  --d[i - 1];
  if (d.size() > 1 && d[0] == '0') d.erase(0, 1);
  return d;
}

decimal plus_one(decimal d) {
  if (!d.negative) return {false, increment_magnitude(d.digits)};
  d.digits = decrement_magnitude(d.digits);
  d.negative = !is_zero(d);
  return d;
}

decimal minus_one(decimal d) {
  if (d.negative) return {true, increment_magnitude(d.digits)};
  if (is_zero(d)) return {true, "1"};
  return {false, decrement_magnitude(d.digits)};
}

enum class rounding { exact, up, down };

// `v` as a whole number, rounded as asked; nullopt when `exact` and v has a fraction, or when v
// is too large to bound digit by digit (20 digits and more).
std::optional<decimal> to_decimal(const json& v, rounding r) {
  if (v.is_number_unsigned()) return decimal{false, std::to_string(v.get<std::uint64_t>())};
  if (v.is_number_integer()) {
    const std::int64_t i = v.get<std::int64_t>();
    std::string digits = std::to_string(i);
    if (i < 0) digits.erase(0, 1);
    return decimal{i < 0, digits};
  }
  const double d = v.get<double>();
  const double whole = r == rounding::up ? std::ceil(d) : std::floor(d);
  if (!std::isfinite(d) || std::fabs(whole) >= 1e20 || (r == rounding::exact && whole != d)) {
    return std::nullopt;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(whole));  // exact: whole < 2^67
  decimal out{whole < 0, buf};
  return out;
}

std::string nines(std::size_t n) {
  return std::string(n, '9');
}
std::string zeros(std::size_t n) {
  return std::string(n, '0');
}

std::string digit_class(char lo, char hi) {
  return lo == hi ? gbnf_quote(std::string(1, lo)) : fmt::format("[{}-{}]", lo, hi);
}

std::string any_digits(std::size_t n) {
  return gbnf_repeat("[0-9]", n, n);
}

// Digit strings of a's length from a to b (a <= b). Recursion: once per digit (at most 20,
// and each call recurses on at most one side with a bound of its own).
std::string same_length_range(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  if (i == a.size()) return gbnf_quote(a);
  const std::string prefix = i == 0 ? "" : gbnf_quote(a.substr(0, i));
  const std::size_t n = a.size() - i - 1;
  const std::string a_rest = a.substr(i + 1);
  const std::string b_rest = b.substr(i + 1);
  const bool from_zeros = a_rest == zeros(n);
  const bool to_nines = b_rest == nines(n);
  const char mid_lo = from_zeros ? a[i] : static_cast<char>(a[i] + 1);
  const char mid_hi = to_nines ? b[i] : static_cast<char>(b[i] - 1);
  std::vector<std::string> alts;
  if (!from_zeros) {
    alts.push_back(
        gbnf_sequence({digit_class(a[i], a[i]), gbnf_group(same_length_range(a_rest, nines(n)))}));
  }
  if (mid_lo <= mid_hi) alts.push_back(gbnf_sequence({digit_class(mid_lo, mid_hi), any_digits(n)}));
  if (!to_nines) {
    alts.push_back(
        gbnf_sequence({digit_class(b[i], b[i]), gbnf_group(same_length_range(zeros(n), b_rest))}));
  }
  std::string joined;
  for (const std::string& alt : alts) joined += (joined.empty() ? "" : " | ") + alt;
  return gbnf_sequence({prefix, alts.size() > 1 || !prefix.empty() ? gbnf_group(joined) : joined});
}

// Whole numbers from lo to hi (none: no limit), as digits without leading zeros; lo <= hi.
std::string magnitude_range(const std::string& lo, const std::optional<std::string>& hi) {
  std::vector<std::string> alts;
  const std::size_t lo_len = lo.size();
  const std::size_t hi_len = hi ? hi->size() : 0;
  alts.push_back(same_length_range(lo, hi && hi_len == lo_len ? *hi : nines(lo_len)));
  if (!hi) {
    alts.push_back(gbnf_sequence({"[1-9]", gbnf_repeat("[0-9]", lo_len, unbounded)}));
  } else if (hi_len > lo_len) {
    if (hi_len > lo_len + 1) {
      alts.push_back(gbnf_sequence({"[1-9]", gbnf_repeat("[0-9]", lo_len, hi_len - 2)}));
    }
    alts.push_back(same_length_range("1" + zeros(hi_len - 1), *hi));
  }
  std::string joined;
  for (const std::string& alt : alts) joined += (joined.empty() ? "" : " | ") + alt;
  return joined;
}

// Integers from lo to hi (none: no limit); lo <= hi.
std::string integer_range(const std::optional<decimal>& lo, const std::optional<decimal>& hi) {
  std::vector<std::string> alts;
  if (!hi || !hi->negative) {
    const std::string from = lo && !lo->negative ? lo->digits : "0";
    alts.push_back(
        magnitude_range(from, hi ? std::optional<std::string>(hi->digits) : std::nullopt));
  }
  if (!lo || lo->negative) {  // minus a magnitude from max(1, -hi) to -lo
    const std::string from = hi && hi->negative ? hi->digits : "1";
    const std::optional<std::string> to =
        lo ? std::optional<std::string>(lo->digits) : std::nullopt;
    alts.push_back(gbnf_sequence({gbnf_quote("-"), gbnf_group(magnitude_range(from, to))}));
  }
  std::string joined;
  for (const std::string& alt : alts) joined += (joined.empty() ? "" : " | ") + alt;
  return joined;
}

struct real_bound {
  decimal value;
  bool open = false;  // exclusive
};

const char* const any_fraction = R"(("." [0-9]+)?)";
const char* const zero_fraction = R"(("." "0"+)?)";
const char* const nonzero_fraction = R"("." [0-9]* [1-9] [0-9]*)";

// Unsigned decimals (no exponent) of magnitude from lo to hi (none: no limit). Both are whole
// numbers and bound a non-empty interval.
std::string magnitude_numbers(const real_bound& lo, const std::optional<real_bound>& hi) {
  const std::string& a = lo.value.digits;
  if (hi && hi->value.digits == a) return gbnf_sequence({gbnf_quote(a), zero_fraction});
  std::vector<std::string> alts;
  alts.push_back(gbnf_sequence({gbnf_quote(a), lo.open ? nonzero_fraction : any_fraction}));
  const std::string after_a = increment_magnitude(a);
  if (!hi) {
    alts.push_back(
        gbnf_sequence({gbnf_group(magnitude_range(after_a, std::nullopt)), any_fraction}));
  } else {
    const std::string before_b = decrement_magnitude(hi->value.digits);
    if (compare_magnitudes(after_a, before_b) <= 0) {
      alts.push_back(gbnf_sequence({gbnf_group(magnitude_range(after_a, before_b)), any_fraction}));
    }
    if (!hi->open) alts.push_back(gbnf_sequence({gbnf_quote(hi->value.digits), zero_fraction}));
  }
  std::string joined;
  for (const std::string& alt : alts) joined += (joined.empty() ? "" : " | ") + alt;
  return joined;
}

// Decimals (no exponent) in the interval between lo and hi, which is not empty.
std::string number_range(const std::optional<real_bound>& lo, const std::optional<real_bound>& hi) {
  std::vector<std::string> alts;
  const bool reaches_zero = !hi || (!hi->value.negative && !(is_zero(hi->value) && hi->open));
  if (reaches_zero) {  // zero and above: from max(lo, 0)
    const real_bound from = lo && !lo->value.negative ? *lo : real_bound{};
    alts.push_back(magnitude_numbers(from, hi));
  }
  if (!lo || lo->value.negative) {     // below zero: minus a magnitude from max(-hi, 0) to -lo
    real_bound from{decimal{}, true};  // never "-0"
    if (hi && hi->value.negative) from = real_bound{{false, hi->value.digits}, hi->open};
    std::optional<real_bound> to;
    if (lo) to = real_bound{{false, lo->value.digits}, lo->open};
    alts.push_back(gbnf_sequence({gbnf_quote("-"), gbnf_group(magnitude_numbers(from, to))}));
  }
  std::string joined;
  for (const std::string& alt : alts) joined += (joined.empty() ? "" : " | ") + alt;
  return joined;
}

}  // namespace

std::string json_number_body() {
  return R"("-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?)";
}

std::string json_integer_body() {
  return R"("-"? ("0" | [1-9] [0-9]*))";
}

std::string converter::visit_number(const json& schema, const location& at, bool integer) {
  const auto min_it = schema.find("minimum");
  const auto max_it = schema.find("maximum");
  const auto xmin_it = schema.find("exclusiveMinimum");
  const auto xmax_it = schema.find("exclusiveMaximum");
  // Draft 4's boolean exclusiveMinimum/exclusiveMaximum make minimum/maximum exclusive.
  const auto flag = [&](json::const_iterator it, json::const_iterator bound, const char* name) {
    if (it == schema.end() || !it->is_boolean()) return false;
    if (it->get<bool>() && bound == schema.end()) {
      fail(child(at, name), fmt::format("'{}' true needs a bound to make exclusive", name));
    }
    return it->get<bool>();
  };
  const bool min_open = flag(xmin_it, min_it, "exclusiveMinimum");
  const bool max_open = flag(xmax_it, max_it, "exclusiveMaximum");
  std::optional<real_bound> lo;
  std::optional<real_bound> hi;
  // Reads one bound; an integer's is made inclusive (rounded toward the allowed side).
  const auto read = [&](json::const_iterator it, const char* name, bool open, bool lower) {
    if (it == schema.end() || !it->is_number()) return;
    const rounding r = !integer ? rounding::exact : lower == open ? rounding::down : rounding::up;
    std::optional<decimal> v = to_decimal(*it, r);
    if (!v) {
      fail(child(at, name),
           fmt::format("'{}' {} is unsupported for {} (bounds must be {}under 1e20 in magnitude)",
                       name, it->dump(), integer ? "an integer" : "a number",
                       integer ? "" : "whole numbers "));
    }
    real_bound b{*v, open};
    if (integer && open) b = real_bound{lower ? plus_one(*v) : minus_one(*v), false};
    std::optional<real_bound>& slot = lower ? lo : hi;
    const int c = slot ? compare(b.value, slot->value) : 0;
    if (!slot || (lower ? c > 0 : c < 0)) {
      slot = b;
    } else if (c == 0) {
      slot->open = slot->open || b.open;
    }
  };
  read(min_it, "minimum", min_open, true);
  read(xmin_it, "exclusiveMinimum", true, true);
  read(max_it, "maximum", max_open, false);
  read(xmax_it, "exclusiveMaximum", true, false);
  if (!lo && !hi) return finish(at, builtin(integer ? "integer" : "number"), false);
  if (lo && hi) {
    const int c = compare(lo->value, hi->value);
    if (c > 0 || (c == 0 && (lo->open || hi->open))) {
      fail(at, fmt::format("no {} lies between the minimum and the maximum",
                           integer ? "integer" : "number"));
    }
  }
  if (integer) {
    const auto whole = [](const std::optional<real_bound>& b) {
      return b ? std::optional<decimal>(b->value) : std::nullopt;
    };
    return finish(at, integer_range(whole(lo), whole(hi)), false);
  }
  return finish(at, number_range(lo, hi), false);
}

}  // namespace courier::grammar::json_schema_detail
