#pragma once
// Streaming decode: ids go in one at a time, text comes out as soon as it is final.
//
// Invariants (tested on every fixture and on random streams):
//  - every returned piece is valid UTF-8 and never ends inside a character;
//  - push(i1) + push(i2) + ... + push(in) + flush() == tokenizer.decode({i1..in}) byte for
//    byte, with the same skip_special_tokens;
//  - each push costs O(length of the token), whatever the length of the stream.
//
// How: decode() is "concatenate each id's bytes, repair UTF-8, clean up spaces" (decoder.hpp),
// so this holds back at most the 3 bytes of an unfinished UTF-8 sequence, and, when the
// tokenizer cleans up spaces, the text after the last point where clean-up cannot reach back
// (cleanup.hpp). That is the byte-level form of the "prefix offset / read offset" window of
// vLLM and text-generation-inference, without re-decoding a window per token.
#include <string>

#include "text/tokenizer/tokenizer.hpp"

namespace courier::text {

class incremental_detokenizer {
 public:
  // Borrowed: `tok` must outlive this object.
  explicit incremental_detokenizer(const tokenizer& tok, bool skip_special_tokens = false)
      : tok_(&tok), skip_special_(skip_special_tokens), cleanup_(tok.cleans_up_spaces()) {}

  // Feeds one id; returns the text that became final (often empty for a partial character).
  std::string push(token_id id);
  // Ends the stream: returns what was held back (an unfinished character becomes U+FFFD) and
  // resets, so the object can start a new stream.
  std::string flush();

 private:
  const tokenizer* tok_;  // Borrowed.
  bool skip_special_;
  bool cleanup_;
  std::string pending_bytes_;  // an unfinished UTF-8 sequence (at most 3 bytes)
  std::string held_text_;      // repaired text that clean-up may still change (cleanup_ only)
};

}  // namespace courier::text
