#pragma once
// Jinja's filters (`x | name(args)`). A new filter goes into the table of the file for its
// kind: filters.cpp for text, numbers and JSON, collection_filters.cpp for lists and mappings.
// Each checks its own arguments with call_args::expect and throws template_error (without a
// line: the evaluator adds it) on misuse.
#include <string_view>
#include <vector>

#include "text/jinja/call_args.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

using filter_fn = value (*)(const value& input, const call_args& args, render_state& state);

// The filter called `name`, or nullptr when there is none.
filter_fn find_filter(std::string_view name);

struct filter_entry {
  std::string_view name;
  filter_fn fn;
};
const std::vector<filter_entry>& text_filters();        // filters.cpp
const std::vector<filter_entry>& collection_filters();  // collection_filters.cpp

}  // namespace courier::text::jinja
