#pragma once
// Regular expressions (JSON Schema `pattern`, vLLM's `regex`/`guided_regex`) to an expr.
// The syntax is ECMAScript's (what JSON Schema specifies), less what is not regular:
// alternation `|`, groups `( )` `(?: )` and named groups `(?<n> )` (captures are irrelevant
// here), quantifiers `* + ? {m} {m,} {m,n}` with lazy `?` accepted and ignored, `.` (any code
// point but ECMAScript's line terminators \n \r U+2028 U+2029), classes `[...]` `[^...]` with
// ranges, escapes \d \D \w \W \s \S \t \n \r \f \v \0 \cX \xHH \uHHHH (surrogate pairs joined)
// \u{H...} and escaped punctuation, `^` and `$` at the start and end of every top-level
// alternative alike (pattern_language also takes them mixed). As browsers do (ECMAScript Annex
// B), a `{` that starts no quantifier and a lone `]` or `}` are literals. Backreferences,
// lookaround, \b outside a class, \p{...}, octal escapes, a class that matches nothing, and
// anchors elsewhere are a grammar_error naming the offset (in code points); so are more than
// max_nesting nested groups.
#include <string_view>

#include "grammar/compile_limits.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

struct parsed_regex {
  expr e;
  bool anchored_start = false;  // began with ^
  bool anchored_end = false;    // ended with $
};

// Both throw grammar_error, also when the budget runs out.
parsed_regex parse_regex(std::string_view pattern, const compile_limits& limits = {});
parsed_regex parse_regex(std::string_view pattern, compile_budget& budget);

// The language a JSON Schema `pattern` allows: ECMAScript search semantics, so an unanchored
// side may be preceded or followed by any text (`.*` of any code point, \n included).
expr pattern_language(std::string_view pattern, const compile_limits& limits = {});
expr pattern_language(std::string_view pattern, compile_budget& budget);

}  // namespace courier::grammar
