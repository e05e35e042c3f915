#pragma once
// Reading values: `obj.name`, `obj[key]`, `obj[a:b:c]`, and the items a for loop or a filter
// walks. Missing things are undefined rather than errors, as in @huggingface/jinja, so
// `messages[9].role` on a short conversation is undefined.
#include <string_view>
#include <vector>

#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

// obj.name: a mapping's or namespace's key; undefined for anything else.
value get_attribute(const value& obj, std::string_view name);
// obj[key]: a mapping's key, or a list's or string's item (negative counts from the end);
// undefined when there is none.
value get_item(const value& obj, const value& key);
// The items a for loop or a filter walks: a list's items, a mapping's keys, a string's
// characters, nothing for undefined; anything else is a template_error naming `what`. Charged
// before anything is built.
std::vector<value> items_of(const value& v, std::string_view what, render_state& state);

// obj[start:stop:step] of a list or a string (by code point), each bound possibly undefined.
value slice_value(const value& obj, const value& start, const value& stop, const value& step,
                  render_state& state);

}  // namespace courier::text::jinja
