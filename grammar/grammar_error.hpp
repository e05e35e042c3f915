#pragma once
// The one error of grammar/: a grammar, regular expression or JSON schema that cannot be
// compiled. The message says where (a line:column, a character offset or a JSON pointer) and
// what; admission turns it into a 400 naming the request field.
#include <stdexcept>
#include <string>
#include <utility>

namespace courier::grammar {

struct grammar_error : std::runtime_error {
  explicit grammar_error(const std::string& what) : std::runtime_error(what) {}
  grammar_error(const std::string& what, std::string limit_name)
      : std::runtime_error(what), limit(std::move(limit_name)) {}

  // Empty, or the compile_limits limit the grammar ran past: "work", "memory", "time" or
  // "branches" (compile_limits.hpp), so that a caller can name its own setting for it.
  std::string limit;
};

}  // namespace courier::grammar
