#pragma once
// Stop strings applied to generated text as it streams: text is released only once no stop
// string can still begin in it, so a stop string never leaks into the output, even when it
// spans several tokens.
#include <string>
#include <vector>

namespace courier::admission {

class stop_matcher {
 public:
  explicit stop_matcher(std::vector<std::string> stops);

  // Feeds newly decoded text (valid UTF-8); returns the text that is now safe to send. After a
  // match, returns the text before the stop string and matched() is true; later calls return
  // nothing. may_stop false (vLLM's min_tokens not passed yet): no stop string may end in this
  // text; one that begins in it may still end in text fed later.
  std::string push(const std::string& text, bool may_stop = true);
  // The generation ended for another reason: the held-back text, which contains no stop string.
  std::string flush();
  bool matched() const { return matched_; }
  const std::string& matched_stop() const { return matched_stop_; }

 private:
  std::vector<std::string> stops_;
  std::size_t max_len_ = 0;
  std::string held_;
  std::size_t fresh_ = 0;  // held_'s first bytes, in which no stop string may end
  bool matched_ = false;
  std::string matched_stop_;
};

}  // namespace courier::admission
