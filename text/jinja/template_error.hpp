#pragma once
// The one error type of the template engine: a syntax error found by chat_template::parse, or a
// failure while rendering (an unknown filter or function, a type error, raise_exception, an
// exceeded work bound). Its what() is one line that names the template line when it is known.
#include <stdexcept>
#include <string>

namespace courier::text::jinja {

class template_error : public std::runtime_error {
 public:
  // `line` is 1-based; 0 means not yet known (the evaluator fills it in from the node it ran).
  explicit template_error(const std::string& message, int line = 0)
      : std::runtime_error(one_line(message, line)), message_(message), line_(line) {}

  int line() const { return line_; }
  // The message without the line prefix, e.g. what raise_exception was given.
  const std::string& message() const { return message_; }

 private:
  static std::string one_line(const std::string& message, int line) {
    std::string text = line > 0 ? "template line " + std::to_string(line) + ": " : "template: ";
    for (char c : message) text += (c == '\n' || c == '\r') ? ' ' : c;
    return text;
  }

  std::string message_;
  int line_;
};

}  // namespace courier::text::jinja
