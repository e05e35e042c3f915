#include <algorithm>
#include <cmath>

#include "tools/bench/dataset.hpp"

namespace courier::bench_tool {
namespace {

// vLLM: low = int(len * (1 - r)), high = int(len * (1 + r)), randint(low, high + 1); we also
// keep low >= 1 so that no prompt is empty and every request generates a token.
std::uniform_int_distribution<std::int64_t> length_range(std::int64_t len, double ratio) {
  const auto low = static_cast<std::int64_t>(std::floor(static_cast<double>(len) * (1 - ratio)));
  const auto high = static_cast<std::int64_t>(std::floor(static_cast<double>(len) * (1 + ratio)));
  return std::uniform_int_distribution<std::int64_t>(std::max<std::int64_t>(low, 1),
                                                     std::max<std::int64_t>(high, 1));
}

}  // namespace

std::vector<bench_request> random_dataset(const random_spec& spec, const token_sampler& ids,
                                          prompt_format format, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<token_id> prefix = ids.draw(rng, static_cast<std::size_t>(spec.prefix_len));
  auto input_len = length_range(spec.input_len, spec.range_ratio);
  auto output_len = length_range(spec.output_len, spec.range_ratio);

  std::vector<bench_request> out(static_cast<std::size_t>(spec.num_prompts));
  for (bench_request& r : out) {
    const std::int64_t n = input_len(rng);
    r.output_len = output_len(rng);
    r.prompt_ids = prefix;
    // Independent ids, not vLLM's run of consecutive ids from a random offset: on a small
    // vocabulary those runs overlap and share prefixes, which the prefix cache then hits.
    const std::vector<token_id> own = ids.draw(rng, static_cast<std::size_t>(n));
    r.prompt_ids.insert(r.prompt_ids.end(), own.begin(), own.end());
    r.input_len = static_cast<std::int64_t>(r.prompt_ids.size());
    if (format == prompt_format::text) r.prompt_text = ids.decode(r.prompt_ids);
  }
  return out;
}

}  // namespace courier::bench_tool
