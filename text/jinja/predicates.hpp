#pragma once
// Jinja's tests, the names after `is` (`x is defined`, `n is divisibleby 3`). Called
// predicates here so as not to be confused with the unit tests.
#include <string_view>

#include "text/jinja/call_args.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

// `args` are the test's own arguments, after the value tested.
using predicate_fn = bool (*)(const value& v, const call_args& args, render_state& state);

// The test called `name`, or nullptr when there is none.
predicate_fn find_predicate(std::string_view name);

}  // namespace courier::text::jinja
