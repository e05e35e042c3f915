#pragma once
// The post_processor stage for one input sequence: the ids that add_special_tokens puts before
// and after it. Supported: TemplateProcessing ("single" template: SpecialToken items around
// one Sequence "A"), BertProcessing, RobertaProcessing, ByteLevel (offsets only: no ids), and a
// Sequence of those (each later one wraps what the earlier ones produced).
#include <cstdint>
#include <vector>

namespace courier::text {

struct post_processor {
  std::vector<std::uint32_t> prefix;  // ids before the text's ids
  std::vector<std::uint32_t> suffix;  // ids after them

  // Wraps this processor's output in `outer`'s, as a later member of a Sequence does.
  void wrap_in(const post_processor& outer) {
    prefix.insert(prefix.begin(), outer.prefix.begin(), outer.prefix.end());
    suffix.insert(suffix.end(), outer.suffix.begin(), outer.suffix.end());
  }
};

}  // namespace courier::text
