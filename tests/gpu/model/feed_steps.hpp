#pragma once
// The steps of the feed tests (llama_feed_test.cpp on the sim, tests/gpu/cuda/feed_test.cpp on a
// GPU): four sequences prefilled and decoded over six steps, run either with each step launched
// before the one before is finished and its decode rows fed on the device from their
// sequence's next-token slot (forward_row::token_slot; every sampling row writes its sequence's
// slot, next_slot), or one step at a time with the sampled tokens written in.
#include <catch2/catch.hpp>

#include <optional>
#include <vector>

#include "gpu/model/generate_one.hpp"
#include "gpu/model/llama.hpp"
#include "tests/support/fixtures.hpp"

namespace courier::test::feed {

inline constexpr std::int32_t block_size = 16;

inline gpu::workspace_limits limits() {
  gpu::workspace_limits l;
  l.max_tokens = 128;
  l.max_seqs = 8;
  l.max_kv_len = 16 * block_size;
  l.max_sample_rows = 8;
  l.block_size = block_size;
  return l;
}

struct seq {
  std::vector<model::token_id> prompt;
  gpu::sampling_row sampling;
  std::vector<std::int32_t> table;
  std::vector<model::token_id> out;  // sampled so far
};

inline std::vector<seq> make_seqs() {
  std::vector<seq> s(4);
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t t = 0; t < 5 + 9 * i; ++t) {
      s[i].prompt.push_back(static_cast<model::token_id>((t * 37 + i * 11) % 500 + 3));
    }
    s[i].table = test::iota_table(4, static_cast<std::int32_t>(4 * i));
    s[i].sampling.num_logprobs = 3;
    if (i % 2 == 1) {
      s[i].sampling.temperature = 0.9f;
      s[i].sampling.top_k = 40;
      s[i].sampling.seed = 1000 + i;
    }
  }
  return s;
}

// scored: the row also scores its prompt (prompt logprobs: position i's target is token i + 1,
// the last position has none), so its samples and scores share one sampling launch.
// Sequence i's slot (next token, table, penalty and bias lists): 3 - i, so that slots and rows
// are numbered differently.
inline std::int32_t slot_of(std::size_t i) {
  return 3 - static_cast<std::int32_t>(i);
}

inline model::forward_row prefill(const seq& s, std::size_t i, bool scored = false) {
  model::forward_row r;
  r.next_slot = slot_of(i);
  r.tokens = s.prompt;
  r.block_table = s.table;
  r.table_slot = slot_of(i);  // written whole
  r.sample = true;
  r.sampling = s.sampling;
  if (scored) {
    r.logits = model::logits_mode::all;
    for (std::size_t i = 0; i < s.prompt.size(); ++i) {
      r.score_targets.push_back(i + 1 < s.prompt.size() ? static_cast<std::int32_t>(s.prompt[i + 1])
                                                        : -1);
    }
    r.score_top_n = 2;
  }
  return r;
}

// The next decode row of sequence i that has `produced` tokens sampled (some maybe still in
// flight): fed its last one, written in or (fed) from its slot on the device.
inline model::forward_row decode(const seq& s, std::size_t i, std::size_t produced, bool fed) {
  model::forward_row r;
  r.tokens = {fed ? 0 : s.out.back()};
  r.token_slot = fed ? slot_of(i) : -1;
  r.next_slot = slot_of(i);
  r.start_pos = static_cast<std::int32_t>(s.prompt.size() + produced) - 1;
  r.block_table = s.table;
  r.table_slot = slot_of(i);  // written whole
  r.sample = true;
  r.sampling = s.sampling;
  r.sampling.draw_index = produced;
  return r;
}

// Which sequences each step has: 0 prefills 0..2; 1 prefills 3 (its chunk first, so the fed
// tokens sit behind it) and decodes 2, 0, 1 (not in the order the step before sampled them);
// 2..5 decode all four.
inline std::vector<std::vector<std::size_t>> schedule() {
  return {{0, 1, 2}, {3, 2, 0, 1}, {0, 1, 2, 3}, {3, 2, 1, 0}, {0, 1, 2, 3}, {1, 0, 3, 2}};
}

// Runs the schedule. fed: each step is launched before the one before is finished, its decode
// rows fed on the device; else each step is finished first and its tokens written in. scored:
// prefill rows also score their prompts (whose answers sit between the samples in the sampling
// launch: a feed that counted them would read a score). Every row's block table is in its
// sequence's table row on the device (forward_row::table_slot): device_tables, written whole by
// its first row and from entry 2 on by every later one; else written whole by every row.
// penalised: every sequence has repetition, frequency and presence penalties in its slot's list
// (forward_row::penalty_slot): run fed, written by its prefill row, each sample counted into it
// on the device; else written by every row, counted here from the prompt and the output; and a
// logit bias in its slot's list (bias_slot), likewise written once or by every row.
// Returns every sample in order.
inline std::vector<gpu::sample_result> run(model::llama_model& m, model::kv_cache& cache,
                                           bool fed, bool scored = false,
                                           bool device_tables = false, bool penalised = false) {
  std::vector<seq> seqs = make_seqs();
  if (penalised) {
    for (seq& s : seqs) {
      // Strong enough to change tokens within a few steps: prompt tokens and repeats favoured,
      // the presence penalty against the frequency one.
      s.sampling.repetition_penalty = 0.5f;
      s.sampling.frequency_penalty = -1.5f;
      s.sampling.presence_penalty = 0.5f;
    }
  }
  // With the penalties, a logit bias per sequence (kept on the device too when fed).
  std::vector<std::vector<gpu::bias_token>> bias(seqs.size());
  if (penalised) {
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      for (std::uint32_t t = 0; t < 12; ++t) {
        bias[i].push_back({static_cast<std::uint32_t>(7 + 31 * t + i), t % 2 ? 1.5f : -2.0f});
      }
    }
  }
  std::vector<std::size_t> produced(seqs.size(), 0);
  std::vector<gpu::sample_result> all;
  std::optional<model::launched_forward> in_flight;
  std::vector<std::size_t> in_flight_rows;  // the sequence of each row of the step in flight
  auto finish = [&] {
    model::forward_output out = in_flight->finish();
    REQUIRE(out.rows.size() == in_flight_rows.size());
    for (std::size_t r = 0; r < out.rows.size(); ++r) {
      REQUIRE(out.rows[r].samples.size() == 1);
      const std::size_t prompt = seqs[in_flight_rows[r]].prompt.size();
      const bool prefilled = seqs[in_flight_rows[r]].out.empty();
      CHECK(out.rows[r].scores.size() == (scored && prefilled ? prompt - 1 : 0));
      seqs[in_flight_rows[r]].out.push_back(out.rows[r].samples[0].token);
      all.push_back(out.rows[r].samples[0]);
    }
    in_flight.reset();
  };
  for (const std::vector<std::size_t>& rows : schedule()) {
    if (!fed && in_flight) finish();
    model::forward_batch fb;
    for (std::size_t i : rows) {
      if (produced[i] == 0) {
        fb.rows.push_back(prefill(seqs[i], i, scored));
      } else {
        fb.rows.push_back(decode(seqs[i], i, produced[i], fed));
      }
      model::forward_row& row = fb.rows.back();
      if (device_tables && produced[i] > 0) row.table_keep = 2;
      const bool write_lists = !fed || produced[i] == 0;
      if (penalised) {
        row.penalty_slot = slot_of(i);
        row.penalty_init = write_lists;
        row.sampling.bias_count = static_cast<std::int32_t>(bias[i].size());
        row.bias_slot = slot_of(i);
        row.bias_init = write_lists;
        if (write_lists) {
          row.sampling.bias_begin = static_cast<std::int32_t>(fb.bias_tokens.size());
          fb.bias_tokens.insert(fb.bias_tokens.end(), bias[i].begin(), bias[i].end());
        }
      }
      if (penalised && write_lists) {
        const auto list = model::penalty_tokens_for(seqs[i].prompt, seqs[i].out);
        row.sampling.penalty_begin = static_cast<std::int32_t>(fb.penalty_tokens.size());
        row.sampling.penalty_count = static_cast<std::int32_t>(list.size());
        fb.penalty_tokens.insert(fb.penalty_tokens.end(), list.begin(), list.end());
      }
      ++produced[i];
    }
    model::launched_forward next = m.launch(fb, cache);
    if (in_flight) finish();
    in_flight = std::move(next);
    in_flight_rows = rows;
  }
  finish();
  return all;
}

inline void require_same(const std::vector<gpu::sample_result>& a,
                         const std::vector<gpu::sample_result>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("sample " << i);
    CHECK(a[i].token == b[i].token);
    CHECK(a[i].logprob == b[i].logprob);
    CHECK(a[i].top_ids == b[i].top_ids);
    CHECK(a[i].top_logprobs == b[i].top_logprobs);
  }
}

}  // namespace courier::test::feed
