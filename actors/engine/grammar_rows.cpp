#include "actors/engine/grammar_rows.hpp"

#include <algorithm>

#include "gpu/sampling.hpp"

namespace courier::actors {

namespace {

const msg::output_grammar* grammar_of(const msg::plan_row& row, const sequence_record* r) {
  return row.sample && r && r->sampling.grammar ? &r->sampling.grammar : nullptr;
}

std::int32_t positions(const msg::plan_row& row) { return 1 + row.num_drafts; }

// The grammar's 64-bit mask as the samplers' 32-bit words, cut to the model's vocabulary.
void to_words(const grammar::token_bitmask& mask, std::uint32_t* out, std::int64_t vocab) {
  const std::int64_t words = gpu::mask_words_per_row(vocab);
  for (std::int64_t w = 0; w < words; ++w) {
    const auto wide = static_cast<std::size_t>(w / 2);
    out[w] = wide < mask.size() ? static_cast<std::uint32_t>(mask[wide] >> (32 * (w % 2))) : 0u;
  }
  if (vocab % 32 != 0) out[words - 1] &= (1u << (vocab % 32)) - 1u;
}

// The sequence's grammar state, made at its first constrained row.
sequence_grammar& state_of(sequence_record& r) {
  if (!r.grammar) {
    const msg::output_grammar& og = r.sampling.grammar;
    auto g = std::make_shared<sequence_grammar>();
    g->masks = og.masks;
    g->m = std::make_unique<grammar::matcher>(g->masks->grammar_ptr());
    g->trigger = og.trigger;
    g->repeats = og.trigger_repeats;
    g->active = g->trigger.empty();
    r.grammar = std::move(g);
  }
  return *r.grammar;
}

}  // namespace

bool grammar_rows::constrained(const msg::step_plan& plan, const std::vector<row_use>& uses,
                               const sequence_table& seqs) {
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    if (uses[i].runs && grammar_of(plan.rows[i], seqs.find(plan.rows[i].seq))) return true;
  }
  return false;
}

void grammar_rows::place(const msg::step_plan& plan, const std::vector<row_use>& uses,
                         const sequence_table& seqs, model::forward_batch& fb,
                         std::int64_t vocab) {
  const std::int64_t words = gpu::mask_words_per_row(vocab);
  std::int64_t used = 0;
  std::size_t k = 0;  // the row's in fb
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    if (!uses[i].runs) continue;
    const std::size_t at = k++;
    if (!grammar_of(plan.rows[i], seqs.find(plan.rows[i].seq))) continue;
    fb.rows[at].sampling.mask_begin = used;
    used += positions(plan.rows[i]) * words;
  }
  fb.mask_words.assign(static_cast<std::size_t>(used), 0u);
}

void grammar_rows::take_free_bytes(sequence_grammar& g, const std::string& bytes,
                                   sequence_grammar::token_step& s) {
  const std::string seen = g.tail + bytes;
  const std::size_t at = seen.find(g.trigger);
  const std::size_t keep = g.trigger.size() - 1;
  if (at == std::string::npos) {
    g.tail = seen.size() > keep ? seen.substr(seen.size() - keep) : seen;
    return;
  }
  const std::string rest = seen.substr(at + g.trigger.size());
  g.m->restart();
  s.matcher_steps = 1;
  g.tail.clear();
  if (!rest.empty()) {
    if (!g.m->accept(rest)) {  // not the grammar's: the output stays free
      g.m->rollback(1);
      s.matcher_steps = 0;
      return;
    }
    s.matcher_steps = 2;
  }
  g.active = !(g.repeats && g.m->is_terminated());
}

bool grammar_rows::take(sequence_grammar& g, msg::token_id t) {
  const grammar::token_vocabulary& v = g.masks->vocabulary();
  const auto& eos = v.eos_ids();
  const bool is_eos = std::find(eos.begin(), eos.end(), t) != eos.end();
  sequence_grammar::token_step s;
  s.active_before = g.active;
  s.tail_before = g.tail;
  if (!g.active) {
    if (!is_eos && t < v.id_bound()) take_free_bytes(g, v.bytes(t), s);
  } else if (is_eos) {
    if (!g.m->can_end()) return false;
  } else {
    if (t >= v.id_bound() || v.bytes(t).empty() || !g.m->accept(v.bytes(t))) return false;
    s.matcher_steps = 1;
    // A triggered part that is complete gives the output back.
    if (!g.trigger.empty() && g.repeats && g.m->is_terminated()) g.active = false;
  }
  g.steps.push_back(std::move(s));
  return true;
}

bool grammar_rows::too_ambiguous(const sequence_grammar& g) {
  return g.active && g.m->current().stacks.size() > g.masks->grammar().max_stacks();
}

void grammar_rows::undo_last(sequence_grammar& g) {
  sequence_grammar::token_step& s = g.steps.back();
  g.m->rollback(s.matcher_steps);
  g.active = s.active_before;
  g.tail = std::move(s.tail_before);
  g.steps.pop_back();
}

void grammar_rows::fill_row(const msg::plan_row& row, sequence_grammar& g, std::uint32_t* out,
                            std::int64_t vocab, grammar::token_bitmask& scratch) {
  const std::int64_t stride = gpu::mask_words_per_row(vocab);
  // Tokens the scheduler dropped (a preempted sequence's step in flight) are taken back.
  const auto want = static_cast<std::size_t>(row.draw_index);
  while (g.steps.size() > want) undo_last(g);
  if (g.steps.size() < want) return;  // behind (a failed step): empty masks fail it
  // Position j is masked as if drafts 0..j-1 stood; once a draft is refused, later positions
  // are never reached (the sample there differs from the refused draft), so they repeat.
  const std::size_t first_draft = row.tokens.size() - static_cast<std::size_t>(row.num_drafts);
  std::size_t taken = 0;
  bool going = true;
  for (std::int32_t j = 0; j < positions(row); ++j) {
    std::uint32_t* mask = out + j * stride;
    if (!going) {
      std::copy(mask - stride, mask, mask);
    } else if (g.active) {
      if (too_ambiguous(g)) {  // the mask stays empty: apply() fails the row, saying why
        going = false;
        continue;
      }
      grammar::fill_token_mask(*g.m, *g.masks, scratch);
      to_words(scratch, mask, vocab);
    } else {
      std::fill(mask, mask + stride, ~0u);  // free text: every token
      if (vocab % 32 != 0) mask[stride - 1] = (1u << (vocab % 32)) - 1u;
    }
    if (going && j < row.num_drafts) {
      going = take(g, row.tokens[first_draft + static_cast<std::size_t>(j)]);
      taken += going ? 1 : 0;
    }
  }
  while (taken-- > 0) undo_last(g);
}

void grammar_rows::fill(const msg::step_plan& plan, const std::vector<row_use>& uses,
                        sequence_table& seqs, std::vector<std::uint32_t>& words,
                        std::int64_t vocab) {
  const std::int64_t stride = gpu::mask_words_per_row(vocab);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    const msg::plan_row& row = plan.rows[i];
    sequence_record* r = seqs.find(row.seq);
    if (!uses[i].runs || !grammar_of(row, r)) continue;
    fill_row(row, state_of(*r), words.data() + at, vocab, scratch_);
    at += positions(row) * stride;
  }
}

void grammar_rows::apply(const msg::step_plan& plan, sequence_table& seqs, msg::step_result& r) {
  if (r.error != msg::error_code::none) return;
  for (std::size_t i = 0; i < plan.rows.size() && i < r.rows.size(); ++i) {
    const msg::plan_row& row = plan.rows[i];
    msg::row_result& rr = r.rows[i];
    sequence_record* rec = seqs.find(row.seq);
    if (rr.error != msg::error_code::none || !grammar_of(row, rec)) continue;
    sequence_grammar& g = state_of(*rec);
    if (g.steps.size() != row.draw_index) {
      rr.error = msg::error_code::engine_failure;
      rr.message = "the grammar's state was lost for this sequence (a step before failed)";
      continue;
    }
    for (std::size_t k = 0; k < rr.tokens.size(); ++k) {
      const msg::token_id t = rr.tokens[k];
      if (t == gpu::no_allowed_token) {
        // A grammar that is complete allows only the end token, which min_tokens may hold back.
        const std::int32_t min_tokens = rec->sampling.min_tokens;
        const bool held = row.draw_index + k < static_cast<std::uint64_t>(min_tokens);
        rr.error = msg::error_code::invalid_request;
        rr.message =
            too_ambiguous(g)
                ? "the output's parse goes on in more than " +
                      std::to_string(g.masks->grammar().max_stacks()) +
                      " ways at once here (server.grammar_max_branches): the grammar is too "
                      "ambiguous to follow"
                : "the output cannot go on inside its grammar: no token of the vocabulary "
                  "continues it here" +
                      (held ? " (min_tokens " + std::to_string(min_tokens) +
                                  " holds back the end token after output token " +
                                  std::to_string(row.draw_index + k) + ")"
                            : std::string());
        break;
      }
      if (!take(g, t)) {
        rr.error = msg::error_code::engine_failure;
        rr.message = "the sampler drew a token the grammar refuses";
        break;
      }
    }
  }
}

}  // namespace courier::actors
