// step_inputs, the host side of a step, without a device: each array worked out here by hand
// from forward_row's documented meaning (forward_batch.hpp): KV slot = block * block_size +
// offset, a row's logits rows its last num_sample positions (or all), its sampled positions
// before its scored ones, index pairs for the device's copies, draft rows handed out in order.
#include <catch2/catch.hpp>
#include <vector>

#include "gpu/model/step_inputs.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_step_inputs {

using namespace courier::model;
using v32 = std::vector<std::int32_t>;

namespace {

// A row whose table is written whole into table row `slot` (forward_row::table_slot).
forward_row row_of(std::vector<token_id> tokens, std::int32_t start, v32 table,
                   std::int32_t slot) {
  forward_row r;
  r.tokens = std::move(tokens);
  r.start_pos = start;
  r.block_table = std::move(table);
  r.table_slot = slot;
  return r;
}

bool same(const sample_entry& e, std::int32_t row, std::int32_t index, bool score) {
  return e.row == row && e.index == index && e.score == score;
}

}  // namespace

TEST_CASE("step inputs: a prefill and a decode row", "[model]") {
  forward_batch b;
  b.rows.push_back(row_of({11, 12, 13}, 0, {7}, 5));  // a whole prompt, sampled at its end
  b.rows[0].sample = true;
  b.rows.push_back(row_of({99}, 5, {2, 9}, 1));  // a decode step fed from slot 3
  b.rows[1].sample = true;
  b.rows[1].token_slot = 3;
  b.rows[1].next_slot = 1;
  b.rows[1].penalty_slot = 2;
  b.rows[1].table_keep = 2;  // its table is on the device already
  const step_inputs in = build_step_inputs(b, {4, 16, 0, false});
  CHECK_FALSE(in.lora);
  CHECK(in.ids == v32{11, 12, 13, 99});
  CHECK(in.positions == v32{0, 1, 2, 5});
  CHECK(in.slots == v32{28, 29, 30, 9 * 4 + 1});
  CHECK(in.token_seq == v32{5, 5, 5, 1});  // each token's table row is its row's slot
  CHECK(in.kv_len == v32{3, 6});
  CHECK(in.max_kv == 6);
  CHECK(in.logits_begin == std::vector<std::int64_t>{0, 1});
  CHECK(in.logit_index == v32{2, 3});
  CHECK(in.sample_index == v32{0, 1});
  CHECK(in.samples_in_place());
  REQUIRE(in.entries.size() == 2);
  CHECK(same(in.entries[0], 0, 0, false));
  CHECK(same(in.entries[1], 1, 0, false));
  CHECK(in.feed_src == v32{3});  // slot 3's token into ids[3]
  CHECK(in.feed_dst == v32{3});
  CHECK(in.keep_src == v32{1});  // sample entry 1 into slot 1
  CHECK(in.keep_dst == v32{1});
  CHECK(in.count_src == v32{1});  // and counted into penalty list 2
  CHECK(in.count_dst == v32{2});
  CHECK(in.table_values == v32{7});  // row 0's whole table into its row: 5 * 16 + 0
  CHECK(in.table_places == v32{5 * 16});
  CHECK(in.state_rows.empty());
  CHECK(in.save_rows.empty());
  CHECK(in.lora_rows.empty());
}

TEST_CASE("step inputs: tables kept on the device write only their new entries", "[model]") {
  forward_batch b;
  b.rows.push_back(row_of({1}, 8, {4, 5, 6}, 2));
  b.rows[0].table_keep = 2;  // entries 0 and 1 are there already
  b.rows[0].logits = logits_mode::none;
  b.rows.push_back(row_of({2, 3}, 0, {8}, 0));
  const step_inputs in = build_step_inputs(b, {4, 10, 0, false});
  CHECK(in.token_seq == v32{2, 0, 0});  // each token's table row is its row's slot
  CHECK(in.table_values == v32{6, 8});
  CHECK(in.table_iota == v32{0, 1});
  CHECK(in.table_places == v32{2 * 10 + 2, 0 * 10 + 0});
  CHECK(in.logits_begin == std::vector<std::int64_t>{-1, 0});  // row 0 asks for none
  CHECK(in.logit_index == v32{2});
  CHECK(in.sample_index.empty());
  CHECK_FALSE(in.samples_in_place());  // a logits row that is not sampled
}

TEST_CASE("step inputs: scored positions follow the sample at the same position", "[model]") {
  forward_batch b;
  b.rows.push_back(row_of({1, 2, 3}, 0, {0}, 0));
  b.rows[0].logits = logits_mode::all;
  b.rows[0].sample = true;
  b.rows[0].score_targets = {5, -1, 6};
  const step_inputs in = build_step_inputs(b, {4, 4, 0, false});
  CHECK(in.logit_index == v32{0, 1, 2});
  CHECK(in.sample_index == v32{0, 2, 2});
  REQUIRE(in.entries.size() == 3);
  CHECK(same(in.entries[0], 0, 0, true));   // position 0 scored
  CHECK(same(in.entries[1], 0, 0, false));  // position 2 sampled (its first sample)
  CHECK(same(in.entries[2], 0, 2, true));   // and scored
  CHECK_FALSE(in.samples_in_place());
}

TEST_CASE("step inputs: a hybrid's rows verifying drafts get draft rows in order", "[model]") {
  forward_batch b;
  b.rows.push_back(row_of({1, 2, 3}, 4, {0, 1}, 0));  // verifies 2 drafts
  b.rows[0].sample = true;
  b.rows[0].num_sample = 3;
  b.rows[0].state_slot = 4;
  b.rows.push_back(row_of({7}, 0, {2}, 1));  // plain decode
  b.rows[1].sample = true;
  b.rows[1].state_slot = 1;
  b.rows[1].lora_slot = 3;
  b.rows.push_back(row_of({8, 9}, 2, {3}, 2));  // verifies 1 draft
  b.rows[2].sample = true;
  b.rows[2].num_sample = 2;
  b.rows[2].state_slot = 0;
  const step_inputs in = build_step_inputs(b, {4, 4, 10, true});
  CHECK(in.state_rows == v32{4, 4, 4, 1, 0, 0});
  // A draft row after each of a row's first k sampled positions; the last stays in its slot.
  CHECK(in.save_rows == v32{10, 11, -1, -1, 12, -1});
  // gpu::draft_states: first sample entry, first token checked, drafts, draft row, state row.
  CHECK(in.draft_checks == v32{0, 1, 2, 10, 4, /**/ 4, 5, 1, 12, 0});
  CHECK(in.sample_index == v32{0, 1, 2, 3, 4, 5});
  CHECK(in.logit_index == v32{0, 1, 2, 3, 4, 5});
  CHECK(in.samples_in_place());
  REQUIRE(in.entries.size() == 6);
  CHECK(same(in.entries[2], 0, 2, false));
  CHECK(same(in.entries[5], 2, 1, false));
  CHECK(in.lora);  // one row has an adapter: every token's slot goes up
  CHECK(in.lora_rows == v32{-1, -1, -1, 3, -1, -1});
}

}  // namespace courier_test_gpu_model_step_inputs
