#include "actors/scheduler/sequence.hpp"

#include <stdexcept>
#include <string>

namespace courier::actors {

namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("scheduler: ") + what);
}

}  // namespace

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
