#pragma once
// The Python methods templates call on values: str (strip, split, startswith, replace, ...),
// dict (get, items, keys, values) and list (index, count). Only methods that do not mutate:
// transformers renders in Jinja's ImmutableSandboxedEnvironment, where list.append and
// dict.update fail, so templates written for it never need them.
#include <optional>
#include <string_view>

#include "text/jinja/call_args.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

// `obj.name(args)`, or std::nullopt when `obj`'s type has no method `name`.
std::optional<value> call_method(const value& obj, std::string_view name, const call_args& args,
                                 render_state& state);

}  // namespace courier::text::jinja
