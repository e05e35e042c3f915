#pragma once
// The one exception type of text/tokenizer: thrown only while loading (an unreadable file, bad
// JSON, an unsupported component). Encoding and decoding never throw (beyond std::bad_alloc).
// what() is one line that starts with the file, e.g.
// "tokenizer.json: unsupported pre_tokenizer type 'Whitespace'".
#include <stdexcept>

namespace courier::text {

class tokenizer_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace courier::text
