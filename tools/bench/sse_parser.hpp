#pragma once
// An incremental text/event-stream parser (the WHATWG "server-sent events" rules that matter
// for OpenAI streams): bytes go in as they arrive, split anywhere, and complete events come out.
//
// Lines end in LF, CRLF or CR (a CR at the end of one feed and an LF at the start of the next
// are one line end). "data:" lines of an event are joined with "\n"; one space after the colon
// is dropped; a line starting with ':' is a comment; a blank line ends the event; an event with
// no data line is not emitted; fields other than data and event (id, retry, unknown) are
// ignored; a line without a colon is a field with an empty value.
#include <string>
#include <string_view>
#include <vector>

namespace courier::bench_tool {

struct sse_event {
  std::string event;  // the "event:" field; empty when absent
  std::string data;
};

class sse_parser {
 public:
  // Appends the events that `bytes` completes to `out`.
  void feed(std::string_view bytes, std::vector<sse_event>& out);
  // Whether bytes of an unfinished line or event are held (a stream that ends here was cut).
  bool has_partial() const { return !line_.empty() || has_data_; }

 private:
  void on_line(std::vector<sse_event>& out);

  std::string line_;       // the unfinished line
  bool after_cr_ = false;  // the last byte fed was a CR: an LF next is part of that line end
  sse_event pending_;
  bool has_data_ = false;
};

}  // namespace courier::bench_tool
