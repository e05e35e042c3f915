#include "grammar/expr.hpp"

#include <algorithm>
#include <utility>

namespace courier::grammar {

namespace {

constexpr char32_t max_code_point = 0x10FFFF;
constexpr char32_t surrogate_first = 0xD800;
constexpr char32_t surrogate_last = 0xDFFF;

}  // namespace

expr expr::make_literal(std::string bytes) {
  expr e;
  e.k = bytes.empty() ? kind::empty : kind::literal;
  e.text = std::move(bytes);
  return e;
}

expr expr::make_class(std::vector<code_point_range> ranges, bool negated) {
  expr e;
  e.k = kind::char_class;
  e.ranges = normalize_ranges(std::move(ranges), negated);
  return e;
}

expr expr::make_any_char() { return make_class({}, true); }

expr expr::make_ref(std::string rule_name) {
  expr e;
  e.k = kind::rule_ref;
  e.text = std::move(rule_name);
  return e;
}

expr expr::make_sequence(std::vector<expr> items) {
  if (items.size() == 1) return std::move(items[0]);
  expr e;
  e.k = items.empty() ? kind::empty : kind::sequence;
  e.children = std::move(items);
  return e;
}

expr expr::make_alternation(std::vector<expr> items) {
  if (items.size() == 1) return std::move(items[0]);
  expr e;
  e.k = kind::alternation;  // no alternatives: matches nothing
  e.children = std::move(items);
  return e;
}

expr expr::make_repeat(expr item, std::uint32_t min, std::uint32_t max) {
  expr e;
  e.k = kind::repeat;
  e.min = min;
  e.max = std::max(min, max);
  e.children.push_back(std::move(item));
  return e;
}

std::vector<code_point_range> normalize_ranges(std::vector<code_point_range> ranges,
                                               bool negated) {
  for (code_point_range& r : ranges) {
    if (r.first > r.last) std::swap(r.first, r.last);
    r.last = std::min(r.last, max_code_point);
  }
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [](const code_point_range& r) { return r.first > max_code_point; }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(), [](const code_point_range& a, const code_point_range& b) {
    return a.first < b.first;
  });
  std::vector<code_point_range> merged;
  for (const code_point_range& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  if (negated) {
    std::vector<code_point_range> complement;
    char32_t next = 0;
    for (const code_point_range& r : merged) {
      if (r.first > next) complement.push_back({next, r.first - 1});
      next = r.last + 1;
    }
    if (next <= max_code_point) complement.push_back({next, max_code_point});
    merged = std::move(complement);
  }
  // Cut the surrogates out: they are not characters, and UTF-8 cannot encode them.
  std::vector<code_point_range> out;
  for (const code_point_range& r : merged) {
    if (r.last < surrogate_first || r.first > surrogate_last) {
      out.push_back(r);
      continue;
    }
    if (r.first < surrogate_first) out.push_back({r.first, surrogate_first - 1});
    if (r.last > surrogate_last) out.push_back({surrogate_last + 1, r.last});
  }
  return out;
}

}  // namespace courier::grammar
