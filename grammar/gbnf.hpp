#pragma once
// GBNF, llama.cpp's grammar format (its `grammar` request field; vLLM's `grammar` / `guided_grammar`
// take the same EBNF shape):
//
//   root   ::= "{" ws pair ("," ws pair)* "}"   # comments run to the end of the line
//   pair   ::= [a-z]+ ":" ws ( "true" | "false" )
//   ws     ::= [ \t\n]*
//
// A rule is `name ::= body`; names are [a-zA-Z0-9_-]+; a body ends at a newline outside
// parentheses. Terminals: "literal" (escapes \n \r \t \\ \" \xHH \uHHHH \UHHHHHHHH), [class]
// and [^class] (the same escapes, and \] \[ \- \^), `.` (any code point). Operators: juxtaposition,
// `|`, `( )`, `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`. A rule may be given several times (its
// alternatives add up, as in llama.cpp). `root` is where matching starts.
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compile_limits.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

struct gbnf_rule {
  std::string name;
  expr body;
};

// Parses GBNF text; throws grammar_error with line:column, or when the budget runs out. Does
// not check references (the compiler does: an undefined rule, a missing root, left recursion).
std::vector<gbnf_rule> parse_gbnf(std::string_view text, const compile_limits& limits = {});
std::vector<gbnf_rule> parse_gbnf(std::string_view text, compile_budget& budget);
// A character of a GBNF rule name: [a-zA-Z0-9_-].
bool is_gbnf_name_char(char c);

}  // namespace courier::grammar
