#pragma once
// What the client measured for one request. Times are seconds on the steady clock from the
// start of the run, taken on the I/O thread when the bytes were handed to it.
#include <cstdint>
#include <string>
#include <vector>

namespace courier::bench_tool {

// Invariants: send_s <= chunk_s[0] <= ... <= chunk_s.back() <= end_s; success implies an
// empty error and at least one chunk.
struct request_record {
  double send_s = 0;            // when the request was started (before connecting)
  double end_s = 0;             // when it finished, succeeded or not
  std::vector<double> chunk_s;  // arrival of each content chunk (non-empty "choices")
  bool success = false;
  std::string error;                  // why it failed; empty on success
  std::int64_t client_input_len = 0;  // the prompt length the client generated
  std::int64_t output_len_requested = 0;
  bool usage_seen = false;  // the stream carried "usage"; the three counts below are from it
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;
  std::size_t generated_bytes = 0;  // length of the generated text (UTF-8 bytes)
  std::vector<std::int64_t> output_ids;  // the stream's token ids, when it carried them
  std::vector<std::int64_t> prompt_ids;  // a later turn's whole prompt, as sent (multi-turn)

  // The counts the metrics use: the server's usage, else the client's own prompt length and
  // the number of content chunks.
  std::int64_t input_tokens() const { return usage_seen ? prompt_tokens : client_input_len; }
  std::int64_t output_tokens() const {
    return usage_seen ? completion_tokens : static_cast<std::int64_t>(chunk_s.size());
  }
};

}  // namespace courier::bench_tool
