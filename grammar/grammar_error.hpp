#pragma once
// The one error of grammar/: a grammar, regular expression or JSON schema that cannot be
// compiled. The message says where (a line:column, a character offset or a JSON pointer) and
// what; admission turns it into a 400 naming the request field.
#include <stdexcept>
#include <string>

namespace courier::grammar {

struct grammar_error : std::runtime_error {
  explicit grammar_error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace courier::grammar
