#include <algorithm>

#include "tools/bench/dataset.hpp"

namespace courier::bench_tool {

std::vector<bench_request> multi_turn_dataset(const multi_turn_spec& spec,
                                              const token_sampler& ids, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto n = static_cast<std::size_t>(spec.num_conversations);
  const auto turns = static_cast<std::size_t>(spec.turns);
  // by_turn[t][c]: conversation c's turn t, drawn conversation by conversation.
  std::vector<std::vector<bench_request>> by_turn(turns, std::vector<bench_request>(n));
  for (std::size_t c = 0; c < n; ++c) {
    for (std::size_t t = 0; t < turns; ++t) {
      bench_request& r = by_turn[t][c];
      if (t == 0) r.prompt_ids = ids.draw(rng, static_cast<std::size_t>(spec.system_prompt_len));
      const std::vector<token_id> message =
          ids.draw(rng, static_cast<std::size_t>(spec.message_len));
      r.prompt_ids.insert(r.prompt_ids.end(), message.begin(), message.end());
      r.input_len = static_cast<std::int64_t>(r.prompt_ids.size());
      r.output_len = spec.output_len;
      r.group = static_cast<std::int64_t>(c);
      r.turn = static_cast<std::int64_t>(t);
    }
  }
  // The first turns in a shuffled order (the arrivals), then each later turn after them.
  std::vector<std::size_t> order(n);
  for (std::size_t c = 0; c < n; ++c) order[c] = c;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<bench_request> out;
  out.reserve(n * turns);
  std::vector<std::int64_t> last(n, -1);  // each conversation's latest turn in `out`
  for (std::size_t t = 0; t < turns; ++t) {
    for (const std::size_t c : order) {
      bench_request r = std::move(by_turn[t][c]);
      r.follows = last[c];
      last[c] = static_cast<std::int64_t>(out.size());
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace courier::bench_tool
