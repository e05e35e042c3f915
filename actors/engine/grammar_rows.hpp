#pragma once
// Grammar-constrained rows (structured outputs): the engine keeps, per sequence with a grammar,
// a matcher that has taken every token sampled for it, masks each of its sampled positions with
// the tokens that keep the output inside the grammar, and advances the matcher with what the
// step sampled. The scheduler decides everything else; this only follows its rows.
//
// Consistency with the scheduler: a plan row's draw_index is the number of output tokens the
// sequence has before the token it samples. The matcher is rolled back to that many when it
// has taken more (a step whose tokens the scheduler dropped: the sequence was preempted), and
// a sequence the engine is behind on (a step that failed) gets an empty mask, which fails the
// row. EOS takes no bytes; it is allowed exactly where the grammar is complete. A position
// whose parse has more stacks than the grammar's max_stacks() (an ambiguous grammar, as the
// output grows) gets an empty mask too, and fails its row naming server.grammar_max_branches.
//
// A triggered grammar (output_grammar::trigger, tool_choice auto) leaves the output free (an
// all-ones mask) until the trigger's bytes appear in it, across tokens or inside one; the bytes
// after the trigger in that token start the grammar (a token whose rest the grammar refuses
// leaves the output free), which then holds every token until it is complete.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/engine/sequence_table.hpp"
#include "gpu/model/forward_batch.hpp"
#include "grammar/token_mask.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// A constrained sequence's state, kept in its sequence_record until it ends.
struct sequence_grammar {
  std::shared_ptr<grammar::mask_cache> masks;
  std::unique_ptr<grammar::matcher> m;
  std::string trigger;      // empty: the grammar holds the whole output
  bool repeats = true;      // free again after a triggered part ends
  bool active = true;       // the grammar holds the next token
  std::string tail;         // free: the output's last bytes, which may begin the trigger
  struct token_step {       // what one output token did, to undo it
    std::uint8_t matcher_steps = 0;
    bool active_before = true;
    std::string tail_before;
  };
  std::vector<token_step> steps;  // one per output token taken
};

// The rows of a plan that run (uses[i].runs) are the forward batch's, in order; a row is
// constrained when it samples and its sequence's parameters have a grammar.
class grammar_rows {
 public:
  // Whether any row of the plan that runs is constrained.
  static bool constrained(const msg::step_plan& plan, const std::vector<row_use>& uses,
                          const sequence_table& seqs);

  // Gives each constrained row of `fb` (built from `plan`'s rows that run) its mask slots in
  // fb.mask_words (one per sampled position, zeros until fill()). vocab: the model's.
  static void place(const msg::step_plan& plan, const std::vector<row_use>& uses,
                    const sequence_table& seqs, model::forward_batch& fb, std::int64_t vocab);

  // Writes the masks of `plan`'s constrained rows into `words` (laid out by place()). Every
  // step launched before `plan` must have been applied first.
  void fill(const msg::step_plan& plan, const std::vector<row_use>& uses, sequence_table& seqs,
            std::vector<std::uint32_t>& words, std::int64_t vocab);

  // Advances the matchers with the tokens `r` (the answer to `plan`) kept, and fails the rows
  // whose position allowed no token (the sampler's gpu::no_allowed_token) or whose token the
  // grammar refuses. Sequences that ended meanwhile are skipped.
  static void apply(const msg::step_plan& plan, sequence_table& seqs, msg::step_result& r);

 private:
  // Takes one sampled or drafted token; false (and nothing changes) when the grammar refuses it.
  static bool take(sequence_grammar& g, msg::token_id t);
  static void take_free_bytes(sequence_grammar& g, const std::string& bytes,
                              sequence_grammar::token_step& s);
  static void undo_last(sequence_grammar& g);
  // Its parse holds more stacks than its grammar's max_stacks(): no mask is computed (each stack
  // would be a walk of the vocabulary), and the row fails.
  static bool too_ambiguous(const sequence_grammar& g);
  static void fill_row(const msg::plan_row& row, sequence_grammar& g, std::uint32_t* out,
                       std::int64_t vocab, grammar::token_bitmask& scratch);

  grammar::token_bitmask scratch_;
};

}  // namespace courier::actors
