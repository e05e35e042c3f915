#include "actors/admission/stop_strings.hpp"

#include <algorithm>
#include <utility>

namespace courier::admission {

stop_matcher::stop_matcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
  for (const auto& s : stops_) max_len_ = std::max(max_len_, s.size());
}

std::string stop_matcher::push(const std::string& text, bool may_stop) {
  if (matched_) return {};
  held_ += text;
  if (stops_.empty()) return std::exchange(held_, {});
  if (!may_stop) fresh_ = held_.size();
  // The earliest occurrence of any stop string that ends past fresh_ wins.
  std::size_t best = std::string::npos;
  for (const auto& s : stops_) {
    const std::size_t at = held_.find(s, fresh_ >= s.size() ? fresh_ - s.size() + 1 : 0);
    if (at < best) {
      best = at;
      matched_stop_ = s;
    }
  }
  if (best != std::string::npos) {
    matched_ = true;
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  // Keep the last max_len - 1 bytes (a stop string may start there), moved back to the start
  // of a UTF-8 character so a released piece never ends inside one.
  if (held_.size() < max_len_) return {};
  std::size_t cut = held_.size() - (max_len_ - 1);
  while (cut > 0 && (static_cast<unsigned char>(held_[cut]) & 0xC0) == 0x80) --cut;
  std::string out = held_.substr(0, cut);
  held_.erase(0, cut);
  fresh_ = fresh_ > cut ? fresh_ - cut : 0;
  return out;
}

std::string stop_matcher::flush() {
  if (matched_) return {};
  return std::exchange(held_, {});
}

}  // namespace courier::admission
