#pragma once
// The expression tree of a grammar rule's body, shared by the GBNF parser, the regular
// expression parser and the compiler. Terminals are byte strings (UTF-8) and classes of code
// points; a rule reference names another rule (GBNF only: a regular expression has none).
//
// Invariants: a char_class's ranges are sorted, disjoint and non-adjacent, within
// [0, 0x10FFFF] and never inside the surrogates [0xD800, 0xDFFF] (normalize_ranges() makes them
// so; a negated class is complemented before it is stored). A repeat has exactly one child and
// min <= max. Trees come from untrusted text: parsers bound their nesting (max_nesting).
#include <cstdint>
#include <string>
#include <vector>

namespace courier::grammar {

struct code_point_range {
  char32_t first = 0;  // inclusive
  char32_t last = 0;   // inclusive
};

struct expr {
  enum class kind : std::uint8_t {
    empty,        // matches the empty string
    literal,      // `text`: these bytes
    char_class,   // `ranges`: one code point (its UTF-8 bytes) from the set
    rule_ref,     // `text`: the rule's name
    sequence,     // `children` one after another
    alternation,  // one of `children`
    repeat,       // children[0] between min and max times
  };
  static constexpr std::uint32_t unbounded = 0xFFFFFFFFu;

  kind k = kind::empty;
  std::string text;
  std::vector<code_point_range> ranges;
  std::vector<expr> children;
  std::uint32_t min = 0;
  std::uint32_t max = 0;  // unbounded: no upper limit

  static expr make_empty() { return expr{}; }
  static expr make_literal(std::string bytes);
  static expr make_class(std::vector<code_point_range> ranges, bool negated = false);
  static expr make_any_char();  // every code point (`.` in GBNF; `[\s\S]` in a regex)
  static expr make_ref(std::string rule_name);
  static expr make_sequence(std::vector<expr> items);
  static expr make_alternation(std::vector<expr> items);
  static expr make_repeat(expr item, std::uint32_t min, std::uint32_t max);
};

// The deepest nesting of groups a parser accepts (a grammar_error past it).
constexpr int max_nesting = 200;
// The largest finite repeat bound ({m,n}) a parser accepts.
constexpr std::uint32_t max_repeat_bound = 10000;

// Sorts and merges `ranges` and removes the surrogates; with `negated`, the complement within
// [0, 0x10FFFF] minus the surrogates.
std::vector<code_point_range> normalize_ranges(std::vector<code_point_range> ranges,
                                               bool negated);

// The expression in GBNF syntax (parse_gbnf reads it back to an equal tree, up to grouping):
// literals quoted with escapes, classes as [...] with \xHH/\uHHHH/\UHHHHHHHH escapes, groups
// parenthesized, repeats as *, +, ?, {m}, {m,}, {m,n}.
std::string to_gbnf(const expr& e);

}  // namespace courier::grammar
