#pragma once
// A regular expr (one without rule references) to a byte-level DFA: a Thompson NFA over byte
// ranges (classes split into UTF-8 byte sequences), then the subset construction, then, up to
// 256 states, minimization (Moore's partition refinement), so that equal languages give equal
// automata. The construction's work is bounded (a grammar_error past it): a request's regex
// must not hold a thread for long.
#include "grammar/compiled_grammar.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

// Throws grammar_error when the NFA would pass max_nfa_states or the DFA max_dfa_states.
constexpr std::uint32_t max_nfa_states = 1u << 20;
byte_dfa build_dfa(const expr& regular);

}  // namespace courier::grammar
