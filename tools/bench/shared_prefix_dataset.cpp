#include <algorithm>

#include "tools/bench/dataset.hpp"

namespace courier::bench_tool {

std::vector<bench_request> shared_prefix_dataset(const shared_prefix_spec& spec,
                                                 const token_sampler& ids, prompt_format format,
                                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bench_request> out;
  out.reserve(static_cast<std::size_t>(spec.num_groups * spec.prompts_per_group));
  for (std::int64_t g = 0; g < spec.num_groups; ++g) {
    const std::vector<token_id> system =
        ids.draw(rng, static_cast<std::size_t>(spec.system_prompt_len));
    const std::string system_text =
        format == prompt_format::text && !system.empty() ? ids.decode(system) + "\n\n" : "";
    for (std::int64_t p = 0; p < spec.prompts_per_group; ++p) {
      const std::vector<token_id> question =
          ids.draw(rng, static_cast<std::size_t>(spec.question_len));
      bench_request r;
      r.prompt_ids = system;
      r.prompt_ids.insert(r.prompt_ids.end(), question.begin(), question.end());
      r.input_len = static_cast<std::int64_t>(r.prompt_ids.size());
      r.output_len = spec.output_len;
      r.group = g;
      if (format == prompt_format::text) r.prompt_text = system_text + ids.decode(question);
      out.push_back(std::move(r));
    }
  }
  // Interleave the groups: in generation order each system prompt would arrive in one burst.
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

}  // namespace courier::bench_tool
