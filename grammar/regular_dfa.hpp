#pragma once
// A regular expr (one without rule references) to a byte-level DFA: a Thompson NFA over byte
// ranges (classes split into UTF-8 byte sequences), then the subset construction, then
// minimization (Moore's partition refinement), so that equal languages give equal automata.
#include "grammar/compiled_grammar.hpp"
#include "grammar/expr.hpp"

namespace courier::grammar {

// Throws grammar_error when the NFA would pass max_nfa_states or the DFA max_dfa_states.
constexpr std::uint32_t max_nfa_states = 1u << 20;
byte_dfa build_dfa(const expr& regular);

// True when `e` holds no rule reference (it can become one DFA).
bool is_regular(const expr& e);

}  // namespace courier::grammar
