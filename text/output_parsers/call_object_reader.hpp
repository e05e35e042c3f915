#pragma once
// Reads one tool-call object, {"name": "f", "arguments": {...}}, a byte at a time, for every
// family that writes calls as JSON objects (Hermes blocks, Llama 3 JSON, Mistral's array form).
//
// - "name" must be a non-empty string; "arguments", or Llama's "parameters", an object (its JSON
//   text is passed on byte for byte) or a string (its decoded contents are passed on: some models
//   write the arguments as a string holding JSON). Other keys are checked and skipped; a repeated
//   key after the first is skipped too. An object that closes without arguments has "{}".
// - Arguments that come before the name are held until the name is known: take_arguments()
//   returns nothing before has_name(), so a caller never sees arguments for a nameless call.
// - Any byte that cannot continue such an object fails it; the reader is then spent.
#include <string>

#include "text/output_parsers/json_scanner.hpp"
#include "text/output_parsers/json_string_decoder.hpp"

namespace courier::text::parsers {

class call_object_reader {
 public:
  enum class status {
    more,    // the byte was read; the object is not closed
    done,    // the byte was the closing brace of a valid call object
    failed,  // the byte cannot continue a call object; it was not consumed
  };

  // Leading whitespace is skipped; the first other byte must be '{'.
  status push(char c);

  bool has_name() const { return has_name_; }
  const std::string& name() const { return name_; }  // valid once has_name()
  // Argument text read since the last call; empty until has_name().
  std::string take_arguments();
  // The output ended inside the object: flushes a string's pending escape so that what was read
  // can still be reported.
  void cut();

 private:
  enum class state {
    open,
    key_or_close,
    key,
    key_text,
    colon,
    value,
    name_value,
    arguments_object,
    arguments_string,
    skip_value,
    after_value,
    spent,
  };
  status read_value_start(char c);
  status read_value(char c);
  status fail();

  state state_ = state::open;
  std::string key_;  // the key being read, raw (escapes not decoded: "name" is spelled plainly)
  bool key_escape_ = false;
  json_scanner value_;  // the value being read
  json_string_decoder decoder_;
  std::string name_;
  bool has_name_ = false;
  bool has_arguments_ = false;
  std::string arguments_;  // read and not yet taken; held while !has_name_
};

}  // namespace courier::text::parsers
