#include "tools/bench/sse_parser.hpp"

namespace courier::bench_tool {

void sse_parser::feed(std::string_view bytes, std::vector<sse_event>& out) {
  for (const char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      on_line(out);
      line_.clear();
    } else {
      line_ += c;
    }
  }
}

void sse_parser::on_line(std::vector<sse_event>& out) {
  if (line_.empty()) {
    if (has_data_) out.push_back(std::move(pending_));
    pending_ = {};
    has_data_ = false;
    return;
  }
  if (line_.front() == ':') return;  // comment (servers send them as keep-alives)
  const auto colon = line_.find(':');
  const std::string_view line(line_);
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) pending_.data += '\n';
    pending_.data += value;
    has_data_ = true;
  } else if (field == "event") {
    pending_.event = std::string(value);
  }
}

}  // namespace courier::bench_tool
