#pragma once
// Python's two string formatting mini-languages, for `"%s" % x`, the `format` filter and
// str.format(): the common conversions and specs, not every corner (no `%(name)s`, no
// `{0.attr}`). An unsupported directive is a template_error, never a wrong string.
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/call_args.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

// printf style: %s %r %d %i %f %e %g %x %o %c %% with flags (- + space 0), width, precision.
std::string percent_format(std::string_view format, const std::vector<value>& args,
                           render_state& state);
// str.format: {} {0} {name}, with an optional :spec ({:>8}, {:.2f}, {:05d}) and {{ }}.
std::string brace_format(std::string_view format, const call_args& args, render_state& state);

}  // namespace courier::text::jinja
