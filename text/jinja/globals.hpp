#pragma once
// The global functions a template may call: range, namespace, dict, raise_exception (which
// transformers provides so a template can refuse a conversation) and strftime_now (which it
// provides for templates that print today's date). The render context may shadow any of them.
#include <string_view>

#include "text/jinja/value.hpp"

namespace courier::text::jinja {

// The global called `name`, or nullptr.
const value* find_global(std::string_view name);

}  // namespace courier::text::jinja
