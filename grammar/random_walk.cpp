#include "grammar/random_walk.hpp"

#include <algorithm>
#include <vector>

namespace courier::grammar {

std::optional<std::string> random_sentence(mask_cache& cache, std::mt19937_64& rng,
                                           const random_walk_options& opts) {
  const token_vocabulary& v = cache.vocabulary();
  matcher m(cache.grammar_ptr());
  token_bitmask mask;
  std::string out;
  std::vector<std::uint32_t> allowed, closing;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t step = 0; step < opts.max_tokens; ++step) {
    fill_token_mask(m, cache, mask);
    if (m.can_end() && (m.is_terminated() || unit(rng) < opts.end_probability)) return out;
    allowed.clear();
    closing.clear();
    for (std::uint32_t id : v.token_ids()) {
      if (!mask_has(mask, id)) continue;
      allowed.push_back(id);
      if (v.bytes(id).find_first_of("\"]}") != std::string::npos) closing.push_back(id);
    }
    if (allowed.empty()) return std::nullopt;  // only end of sequence, and it was not drawn
    const double lean = static_cast<double>(step) / static_cast<double>(opts.max_tokens);
    const auto& pool = !closing.empty() && unit(rng) < 0.1 + lean ? closing : allowed;
    const std::uint32_t pick = pool[std::uniform_int_distribution<std::size_t>(
        0, pool.size() - 1)(rng)];
    if (!m.accept(v.bytes(pick))) return std::nullopt;  // a mask bug: tests catch it
    out += v.bytes(pick);
  }
  return std::nullopt;
}

std::shared_ptr<const token_vocabulary> byte_vocabulary() {
  std::vector<std::string> bytes(257);
  for (int b = 0; b < 256; ++b) bytes[static_cast<std::size_t>(b)] = std::string(1, static_cast<char>(b));
  bytes[256] = "</s>";
  return std::make_shared<token_vocabulary>(std::move(bytes), std::vector<std::uint32_t>{256},
                                            std::vector<std::uint32_t>{});
}

}  // namespace courier::grammar
