#include "actors/scheduler/sequence.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace courier::actors {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("scheduler: ") + what);
}

}  // namespace

std::unique_ptr<sequence> make_sequence(msg::submit s, std::uint64_t& seeds,
                                        std::int32_t max_model_len, std::int64_t now_ns) {
  auto seq = std::make_unique<sequence>();
  if (!s.sampling.has_seed) {
    s.sampling.seed = splitmix64(seeds);
    s.sampling.has_seed = true;
  }
  if (s.group == 0) s.group = s.id;
  seq->num_prompt = static_cast<std::int32_t>(s.prompt.size());
  seq->max_total = static_cast<std::int32_t>(std::min<std::int64_t>(
      seq->num_prompt + static_cast<std::int64_t>(s.max_tokens), max_model_len));
  seq->timing.arrival_ns = s.arrival_ns > 0 ? s.arrival_ns : now_ns;
  seq->req = std::move(s);
  seq->tokens = seq->req.prompt;
  return seq;
}

void check_holdings(const sequence& s, std::int32_t block_size, bool recurrent,
                    std::int32_t steps_in_flight) {
  require(s.swapped_state < 0 || (!s.running() && !s.swapped.empty()),
          "a host state row is held by a sequence not swapped out");
  const auto blocks = static_cast<std::int64_t>(s.blocks.size());
  switch (s.state) {
    case seq_state::loading:
      require(s.blocks.empty() && s.swapped.empty(), "a loading sequence holds blocks");
      return;
    case seq_state::waiting:
    case seq_state::swapping_out:
      require(!s.recurrent, "a waiting sequence holds a state slot");
      require(s.restore_block.value < 0 && s.snapshots.empty(),
              "a waiting sequence holds snapshots");
      require(s.state == seq_state::waiting || !s.swapped.empty(), "a sequence swaps out nothing");
      require(s.blocks.empty() && s.copy_batch == 0, "a waiting sequence holds blocks");
      require(s.num_in_flight == 0 && s.samples_in_flight == 0,
              "a waiting sequence has rows in flight");
      require(static_cast<std::int64_t>(s.swapped.size()) ==
                  (s.swapped_tokens + block_size - 1) / block_size,
              "host blocks do not match the swapped tokens");
      require(!recurrent || s.swapped.empty() || s.swapped_state >= 0,
              "a hybrid swapped out its KV without its state");
      return;
    case seq_state::copying_in:
    case seq_state::resuming:
    case seq_state::prefilling:
    case seq_state::decoding:
      require((s.state == seq_state::copying_in) == (s.copy_batch != 0),
              "a sequence copies in without a batch, or the reverse");
      require(s.copy_batch == 0 || (s.num_in_flight == 0 && s.samples_in_flight == 0),
              "a sequence waiting for copies has rows");
      require(s.num_in_flight >= 0 && s.samples_in_flight >= 0 &&
                  s.samples_in_flight <= steps_in_flight,
              "in-flight counts out of range");
      require(blocks * block_size >= s.next_pos(), "blocks do not cover the tokens in flight");
      require(s.swapped.empty(), "a running sequence holds host blocks");
      require(s.host_pins.empty(), "an admitted sequence still pins host blocks");
      require(s.device_pin.blocks().empty(), "an admitted sequence still pins device blocks");
      return;
  }
}

}  // namespace courier::actors
