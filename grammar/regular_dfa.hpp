#pragma once
// A regular expr (one without rule references) to a byte-level DFA: a Thompson NFA over byte
// ranges (classes split into UTF-8 byte sequences), then the subset construction, then, up to
// 256 states, minimization (Moore's partition refinement), so that equal languages give equal
// automata. The construction's work is bounded (a grammar_error past it): a request's regex
// must not hold a thread for long.
#include <optional>

#include "grammar/compile_limits.hpp"
#include "grammar/compiled_grammar.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

// Throws grammar_error when the NFA would pass max_nfa_states or the DFA max_dfa_states, or when
// `budget` runs out. The returned table stays charged to `budget` (table_bytes(d)); the NFA and
// the subset construction's sets are released.
constexpr std::uint32_t max_nfa_states = 1u << 20;
byte_dfa build_dfa(const expr& regular, compile_budget& budget);
// X{min,max} as a counted DFA (byte_dfa::counted) over X's DFA: nullopt (nothing charged) when X
// may match nothing or some string of X is a proper prefix of another (a copy's end would be in
// doubt: `(a|aa){1,9}`). max: expr::unbounded for X{min,}.
std::optional<byte_dfa> build_counted_dfa(const expr& x, std::uint32_t min, std::uint32_t max,
                                          compile_budget& budget);
// What a DFA's table is charged: 256 transitions and two flags per state.
inline std::uint64_t table_bytes(const byte_dfa& d) {
  return std::uint64_t{d.table_states()} * (256 * sizeof(std::uint32_t) + 2);
}

}  // namespace courier::grammar
