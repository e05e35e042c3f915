#pragma once
// transformers' clean_up_tokenization, applied by decode() when tokenizer_config.json sets
// clean_up_tokenization_spaces: " ." -> ".", " ?" -> "?", " !" -> "!", " ," -> ",",
// " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " 's" -> "'s", " 've" -> "'ve", " 're" -> "'re",
// each replace-all in that order over the whole text.
//
// Streaming: every pattern starts with a space and is at most 4 bytes long, and a replacement
// only ever deletes spaces. So if the last 3 bytes of a prefix P hold no space, no occurrence in
// any intermediate string can straddle the end of P, and clean(P + Q) == clean(P) + clean(Q).
// cleanup_safe_split finds such a point.
#include <cstddef>
#include <string>
#include <string_view>

namespace courier::text {

std::string clean_up_tokenization(std::string_view text);

// The largest n <= text.size() such that text[n-3, n) holds no space (n >= 3), or 0.
std::size_t cleanup_safe_split(std::string_view text);

}  // namespace courier::text
