// The engine's grammar-constrained rows, on a small vocabulary: where masks go in the batch,
// that each position's mask is the grammar's after the tokens before it (drafts included),
// rollback to the scheduler's count, and the failures (no token allowed, state lost, a token
// the grammar refuses).
#include "actors/engine/grammar_rows.hpp"

#include <catch2/catch.hpp>

#include "gpu/sampling.hpp"
#include "grammar/compiled_grammar.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_grammar_rows {

using namespace courier;
using actors::grammar_rows;

namespace {

// ids: 0 "a", 1 "b", 2 "ab", 3 "c", 4 EOS, 5 "x" (special: never allowed); vocab 40 (ids past
// the tokenizer's are never allowed either).
constexpr std::int64_t vocab = 40;

std::shared_ptr<grammar::mask_cache> masks_for(const char* gbnf,
                                               const grammar::compile_limits& limits = {}) {
  auto v = std::make_shared<grammar::token_vocabulary>(
      std::vector<std::string>{"a", "b", "ab", "c", "", "x"}, std::vector<std::uint32_t>{4},
      std::vector<std::uint32_t>{5});
  return std::make_shared<grammar::mask_cache>(grammar::compile_gbnf(gbnf, limits), v);
}

// A constrained row, and the grammar its sequence's start carries (the first time it is run).
struct grow {
  msg::plan_row row;
  msg::output_grammar grammar;
  std::int32_t min_tokens = 0;
};

// What the engine keeps: the records (each sequence's grammar state among them) and the rows.
struct engine_side {
  actors::sequence_table seqs{16};
  grammar_rows rows;
  void release(msg::request_id seq) {
    msg::step_plan p;
    p.ended = {seq};
    REQUIRE_FALSE(seqs.apply(p));
  }
};

grow row(msg::request_id seq, const std::shared_ptr<grammar::mask_cache>& g,
         std::uint64_t draw_index, std::vector<msg::token_id> drafts = {}) {
  grow out;
  out.grammar.masks = g;
  msg::plan_row& r = out.row;
  r.seq = seq;
  r.tokens = {7};
  r.tokens.insert(r.tokens.end(), drafts.begin(), drafts.end());
  r.num_drafts = static_cast<std::int32_t>(drafts.size());
  r.sample = true;
  r.decode = true;
  r.draw_index = draw_index;
  return out;
}

// The allowed ids of position `pos` of constrained row `k` (in plan order) after fill().
std::vector<msg::token_id> allowed(const std::vector<std::uint32_t>& words, const model::forward_batch& fb,
                                   std::size_t row, std::int32_t pos) {
  const std::int64_t begin = fb.rows[row].sampling.mask_begin + pos * gpu::mask_words_per_row(vocab);
  std::vector<msg::token_id> out;
  for (msg::token_id id = 0; id < vocab; ++id) {
    if ((words[static_cast<std::size_t>(begin + id / 32)] >> (id % 32)) & 1u) out.push_back(id);
  }
  return out;
}

struct step {
  msg::step_plan plan;
  model::forward_batch fb;
  std::vector<std::uint32_t> words;
};

// One step: a start for each sequence the engine has no record of, the rows' masks placed and
// filled as the engine does.
step run_fill(engine_side& e, std::vector<grow> rows) {
  step s;
  for (grow& r : rows) {
    if (!e.seqs.find(r.row.seq)) {
      msg::sequence_start st;
      st.seq = r.row.seq;
      st.sampling.grammar = r.grammar;
      st.sampling.min_tokens = r.min_tokens;
      st.carries_sampling = true;
      s.plan.starts.push_back(std::move(st));
    }
    r.row.new_blocks = {0};  // the table (unused here) replaced each step
    s.plan.rows.push_back(std::move(r.row));
  }
  REQUIRE_FALSE(e.seqs.apply(s.plan));
  const std::vector<actors::row_use> uses = e.seqs.resolve(s.plan);
  s.fb.rows.resize(s.plan.rows.size());
  grammar_rows::place(s.plan, uses, e.seqs, s.fb, vocab);
  s.words = s.fb.mask_words;
  e.rows.fill(s.plan, uses, e.seqs, s.words, vocab);
  return s;
}

msg::step_result answer(const msg::step_plan& plan, std::vector<std::vector<msg::token_id>> tokens) {
  msg::step_result r;
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::row_result rr;
    rr.seq = plan.rows[i].seq;
    rr.tokens = tokens[i];
    r.rows.push_back(rr);
  }
  return r;
}

using ids = std::vector<msg::token_id>;

}  // namespace

TEST_CASE("grammar rows: masks follow the grammar token by token, EOS where it is complete",
          "[engine][grammar]") {
  const auto g = masks_for(R"(root ::= "a" "b"* "c")");
  engine_side rows;
  grow free_row = row(2, nullptr, 0);
  free_row.grammar = {};
  step s = run_fill(rows, {free_row, row(1, g, 0)});
  CHECK(grammar_rows::constrained(s.plan, rows.seqs.resolve(s.plan), rows.seqs));
  CHECK(s.fb.rows[0].sampling.mask_begin == -1);  // unconstrained rows have no mask
  CHECK(s.fb.rows[1].sampling.mask_begin == 0);
  CHECK(s.words.size() == static_cast<std::size_t>(gpu::mask_words_per_row(vocab)));
  CHECK(allowed(s.words, s.fb, 1, 0) == ids{0, 2});  // "a", "ab"
  msg::step_result r = answer(s.plan, {{9}, {2}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[1].error == msg::error_code::none);
  s = run_fill(rows, {row(1, g, 1)});
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{1, 3});  // "b", "c"
  r = answer(s.plan, {{3}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  s = run_fill(rows, {row(1, g, 2)});
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{4});  // complete: EOS only
  r = answer(s.plan, {{4}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::none);
  CHECK(rows.seqs.find(1)->grammar != nullptr);
  CHECK(rows.seqs.find(2)->grammar == nullptr);
  rows.release(1);
  CHECK(rows.seqs.find(1) == nullptr);
}

TEST_CASE("grammar rows: each draft position is masked after the drafts before it",
          "[engine][grammar]") {
  const auto g = masks_for(R"(root ::= "a" "b"* "c")");
  engine_side rows;
  // Drafts "a", "b", "x" (refused), "c": positions 0..2 follow the drafts, 3 and 4 repeat.
  step s = run_fill(rows, {row(1, g, 0, {0, 1, 5, 3})});
  CHECK(s.words.size() == static_cast<std::size_t>(5 * gpu::mask_words_per_row(vocab)));
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{0, 2});
  CHECK(allowed(s.words, s.fb, 0, 1) == ids{1, 3});
  CHECK(allowed(s.words, s.fb, 0, 2) == ids{1, 3});
  CHECK(allowed(s.words, s.fb, 0, 3) == ids{1, 3});
  CHECK(allowed(s.words, s.fb, 0, 4) == ids{1, 3});
  // The drafts were taken back: the result's tokens (two accepted drafts, then "c") advance it.
  msg::step_result r = answer(s.plan, {{0, 1, 3}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::none);
  s = run_fill(rows, {row(1, g, 3)});
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{4});
}

TEST_CASE("grammar rows: a row behind the matcher rolls it back to the scheduler's count",
          "[engine][grammar]") {
  const auto g = masks_for(R"(root ::= ("a" | "b")+)");
  engine_side rows;
  step s = run_fill(rows, {row(1, g, 0)});
  msg::step_result r = answer(s.plan, {{0}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  s = run_fill(rows, {row(1, g, 1)});
  r = answer(s.plan, {{1}});
  grammar_rows::apply(s.plan, rows.seqs, r);  // the scheduler dropped this token (preempted meanwhile)
  s = run_fill(rows, {row(1, g, 1)});
  r = answer(s.plan, {{2}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::none);
  s = run_fill(rows, {row(1, g, 2)});  // after "a" "ab": EOS or more
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{0, 1, 2, 4});
}

TEST_CASE("grammar rows: no allowed token, a lost state and a refused token fail the row",
          "[engine][grammar]") {
  engine_side rows;
  // Only "x" (a special token, never allowed) could spell this: the mask is empty.
  step s = run_fill(rows, {row(1, masks_for(R"(root ::= "x")"), 0)});
  CHECK(allowed(s.words, s.fb, 0, 0).empty());
  msg::step_result r = answer(s.plan, {{gpu::no_allowed_token}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::invalid_request);
  CHECK_THAT(r.rows[0].message, Catch::Contains("cannot go on inside its grammar"));

  // A complete grammar allows only the end token; below min_tokens the sampler bans it, and
  // the error says so.
  const auto one = masks_for(R"(root ::= "a")");
  grow held = row(3, one, 0);
  held.min_tokens = 3;
  s = run_fill(rows, {held});
  r = answer(s.plan, {{0}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  REQUIRE(r.rows[0].error == msg::error_code::none);
  s = run_fill(rows, {row(3, one, 1)});
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{4});  // EOS only
  r = answer(s.plan, {{gpu::no_allowed_token}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::invalid_request);
  CHECK_THAT(r.rows[0].message,
             Catch::Contains("min_tokens 3 holds back the end token after output token 1"));

  // A sequence the engine is behind on (a step that failed): empty masks, then a clear error.
  const auto g = masks_for(R"(root ::= "a"+)");
  s = run_fill(rows, {row(2, g, 3)});
  CHECK(allowed(s.words, s.fb, 0, 0).empty());
  r = answer(s.plan, {{gpu::no_allowed_token}});
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::engine_failure);
  CHECK_THAT(r.rows[0].message, Catch::Contains("lost"));

  s = run_fill(rows, {row(3, g, 0)});
  r = answer(s.plan, {{1}});  // "b": the sampler must never draw it
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::engine_failure);
  // A failed step changes nothing.
  s = run_fill(rows, {row(4, g, 0)});
  r = answer(s.plan, {{0}});
  r.error = msg::error_code::engine_failure;
  grammar_rows::apply(s.plan, rows.seqs, r);
  CHECK(r.rows[0].error == msg::error_code::none);
}

TEST_CASE("grammar rows: a parse that goes on in more ways than the limit fails its row, "
          "naming the setting",
          "[engine][grammar]") {
  // After n a's, ("a" | "aa") copies have split them about n/2 ways: a stack each.
  grammar::compile_limits limits;
  limits.max_branches = 8;
  const auto g = masks_for(R"(root ::= ("a" | "aa"){1,5000})", limits);
  REQUIRE(g->grammar().max_stacks() == 8);
  engine_side rows;
  std::uint64_t n = 0;
  for (; n < 100; ++n) {
    step s = run_fill(rows, {row(1, g, n)});
    const ids allowed_here = allowed(s.words, s.fb, 0, 0);
    if (allowed_here.empty()) {
      msg::step_result r = answer(s.plan, {{gpu::no_allowed_token}});
      grammar_rows::apply(s.plan, rows.seqs, r);
      CHECK(r.rows[0].error == msg::error_code::invalid_request);
      CHECK_THAT(r.rows[0].message, Catch::Contains("more than 8 ways") &&
                                        Catch::Contains("server.grammar_max_branches"));
      break;
    }
    CHECK(allowed_here == (n == 0 ? ids{0} : ids{0, 4}));  // "a", then EOS too
    msg::step_result r = answer(s.plan, {{0}});
    grammar_rows::apply(s.plan, rows.seqs, r);
    REQUIRE(r.rows[0].error == msg::error_code::none);
  }
  // Followed while the parse had at most 8 stacks (about 16 a's), then stopped: never 100.
  CHECK(n >= 8);
  CHECK(n < 40);
}

namespace {

// ids: 0 "a", 1 "b", 2 "ab", 3 "c", 4 EOS, 5 "<T>", 6 "<", 7 "T>", 8 "<T>a", 9 "<T>q".
std::shared_ptr<grammar::mask_cache> triggered_masks() {
  auto v = std::make_shared<grammar::token_vocabulary>(
      std::vector<std::string>{"a", "b", "ab", "c", "", "<T>", "<", "T>", "<T>a", "<T>q"},
      std::vector<std::uint32_t>{4}, std::vector<std::uint32_t>{});
  return std::make_shared<grammar::mask_cache>(grammar::compile_gbnf(R"(root ::= "a" "b"* "c")"), v);
}

grow triggered_row(const std::shared_ptr<grammar::mask_cache>& g, std::uint64_t draw_index,
                   bool repeats, std::vector<msg::token_id> drafts = {}) {
  grow r = row(1, g, draw_index, std::move(drafts));
  r.grammar.trigger = "<T>";
  r.grammar.trigger_repeats = repeats;
  return r;
}

ids every_token() {
  ids all;
  for (msg::token_id id = 0; id < vocab; ++id) all.push_back(id);
  return all;
}

// Feeds `tokens` one step each and returns the allowed ids before each and after the last.
std::vector<ids> masks_along(engine_side& rows, const std::shared_ptr<grammar::mask_cache>& g,
                             const ids& tokens, bool repeats) {
  std::vector<ids> out;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    step s = run_fill(rows, {triggered_row(g, i, repeats)});
    out.push_back(allowed(s.words, s.fb, 0, 0));
    if (i == tokens.size()) break;
    msg::step_result r = answer(s.plan, {{tokens[i]}});
    grammar_rows::apply(s.plan, rows.seqs, r);
    REQUIRE(r.rows[0].error == msg::error_code::none);
  }
  return out;
}

}  // namespace

TEST_CASE("grammar rows: a triggered grammar holds the output from its trigger to its end",
          "[engine][grammar]") {
  const auto g = triggered_masks();
  engine_side rows;
  // Free, then "<T>" in one token, the grammar until "c", free again, then the trigger split
  // across two tokens, and a token that carries the trigger and the grammar's first byte.
  const std::vector<ids> got =
      masks_along(rows, g, {1, 5, 0, 1, 3, 3, 6, 7, 0, 3, 8, 3}, /*repeats=*/true);
  const ids free = every_token();
  const std::vector<ids> want = {free, free,   {0, 2}, {1, 3}, {1, 3}, free, free,
                                 free, {0, 2}, {1, 3}, free,   {1, 3}, free};
  CHECK(got == want);
  rows.release(1);

  // Without repeats the output ends where the grammar does: EOS only.
  const std::vector<ids> once = masks_along(rows, g, {5, 0, 3}, /*repeats=*/false);
  CHECK(once.back() == ids{4});
  rows.release(1);

  // A token whose bytes after the trigger the grammar refuses leaves the output free.
  const std::vector<ids> refused = masks_along(rows, g, {9}, /*repeats=*/true);
  CHECK(refused.back() == free);
}

TEST_CASE("grammar rows: drafts and rollback cross a trigger", "[engine][grammar]") {
  const auto g = triggered_masks();
  engine_side rows;
  // Drafts "b", "<T>", "a": position 0 free, 1 free, 2 inside the grammar, 3 after "a".
  step s = run_fill(rows, {triggered_row(g, 0, true, {1, 5, 0})});
  CHECK(allowed(s.words, s.fb, 0, 0) == every_token());
  CHECK(allowed(s.words, s.fb, 0, 1) == every_token());
  CHECK(allowed(s.words, s.fb, 0, 2) == ids{0, 2});
  CHECK(allowed(s.words, s.fb, 0, 3) == ids{1, 3});
  msg::step_result r = answer(s.plan, {{1, 5, 0, 3}});  // all three stood, then "c"
  grammar_rows::apply(s.plan, rows.seqs, r);
  REQUIRE(r.rows[0].error == msg::error_code::none);
  s = run_fill(rows, {triggered_row(g, 4, true)});
  CHECK(allowed(s.words, s.fb, 0, 0) == every_token());  // complete: free again
  s = run_fill(rows, {triggered_row(g, 2, true)});  // the scheduler kept only "b", "<T>"
  CHECK(allowed(s.words, s.fb, 0, 0) == ids{0, 2});
  s = run_fill(rows, {triggered_row(g, 1, true)});  // only "b"
  CHECK(allowed(s.words, s.fb, 0, 0) == every_token());
}

}  // namespace courier_test_actors_engine_grammar_rows
