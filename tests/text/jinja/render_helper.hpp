#pragma once
// Renders a template string against a JSON context string: the one-liner every jinja test uses.
#include <string>

#include <nlohmann/json.hpp>

#include "text/jinja/chat_template.hpp"

namespace courier::text::jinja::testing {

inline std::string render(const std::string& source, const std::string& context_json = "{}",
                          const render_options& options = {}) {
  return chat_template::parse(source).render(nlohmann::ordered_json::parse(context_json), options);
}

// The line of the template_error that parsing or rendering throws, or -1 when none is thrown.
inline int error_line(const std::string& source, const std::string& context_json = "{}",
                      const render_options& options = {}) {
  try {
    render(source, context_json, options);
  } catch (const template_error& e) {
    return e.line();
  }
  return -1;
}

}  // namespace courier::text::jinja::testing
