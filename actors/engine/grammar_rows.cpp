#include "actors/engine/grammar_rows.hpp"

#include <algorithm>

#include "gpu/sampling.hpp"

namespace courier::actors {

namespace {

bool has_grammar(const msg::plan_row& row) { return row.sample && row.sampling.grammar; }

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

}  // namespace

bool grammar_rows::constrained(const msg::step_plan& plan) {
  return std::any_of(plan.rows.begin(), plan.rows.end(), has_grammar);
}

void grammar_rows::place(const msg::step_plan& plan, model::forward_batch& fb,
                         std::int64_t vocab) const {
  const std::int64_t words = gpu::mask_words_per_row(vocab);
  std::int64_t used = 0;
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    if (!has_grammar(plan.rows[i])) continue;
    fb.rows[i].sampling.mask_begin = used;
    used += positions(plan.rows[i]) * words;
  }
  fb.mask_words.assign(static_cast<std::size_t>(used), 0u);
}

grammar_rows::seq_grammar& grammar_rows::state_of(const msg::plan_row& row) {
  seq_grammar& g = seqs_[row.seq];
  if (!g.m) {
    const msg::output_grammar& og = row.sampling.grammar;
    g.masks = og.masks;
    g.m = std::make_unique<grammar::matcher>(g.masks->grammar_ptr());
    g.trigger = og.trigger;
    g.repeats = og.trigger_repeats;
    g.active = g.trigger.empty();
  }
  return g;
}

void grammar_rows::take_free_bytes(seq_grammar& g, const std::string& bytes,
                                   seq_grammar::token_step& s) {
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

bool grammar_rows::take(seq_grammar& g, msg::token_id t) {
  const grammar::token_vocabulary& v = g.masks->vocabulary();
  const auto& eos = v.eos_ids();
  const bool is_eos = std::find(eos.begin(), eos.end(), t) != eos.end();
  seq_grammar::token_step s;
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

bool grammar_rows::too_ambiguous(const seq_grammar& g) {
  return g.active && g.m->current().stacks.size() > g.masks->grammar().max_stacks();
}

void grammar_rows::undo_last(seq_grammar& g) {
  seq_grammar::token_step& s = g.steps.back();
  g.m->rollback(s.matcher_steps);
  g.active = s.active_before;
  g.tail = std::move(s.tail_before);
  g.steps.pop_back();
}

void grammar_rows::fill(const msg::step_plan& plan, std::vector<std::uint32_t>& words,
                        std::int64_t vocab) {
  const std::int64_t stride = gpu::mask_words_per_row(vocab);
  std::int64_t at = 0;
  for (const msg::plan_row& row : plan.rows) {
    if (!has_grammar(row)) continue;
    seq_grammar& g = state_of(row);
    std::uint32_t* out = words.data() + at;
    at += positions(row) * stride;
    // Tokens the scheduler dropped (a preempted sequence's step in flight) are taken back.
    const auto want = static_cast<std::size_t>(row.draw_index);
    while (g.steps.size() > want) undo_last(g);
    if (g.steps.size() < want) continue;  // behind (a failed step): empty masks fail it
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
        grammar::fill_token_mask(*g.m, *g.masks, scratch_);
        to_words(scratch_, mask, vocab);
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
}

void grammar_rows::apply(const msg::step_plan& plan, msg::step_result& r) {
  if (r.error != msg::error_code::none) return;
  for (std::size_t i = 0; i < plan.rows.size() && i < r.rows.size(); ++i) {
    const msg::plan_row& row = plan.rows[i];
    if (!has_grammar(row)) continue;
    msg::row_result& rr = r.rows[i];
    auto it = seqs_.find(row.seq);
    if (it == seqs_.end() || it->second.steps.size() != row.draw_index) {
      rr.error = msg::error_code::engine_failure;
      rr.message = "the grammar's state was lost for this sequence (a step before failed)";
      continue;
    }
    for (const msg::token_id t : rr.tokens) {
      if (t == gpu::no_allowed_token) {
        rr.error = msg::error_code::invalid_request;
        rr.message =
            too_ambiguous(it->second)
                ? "the output's parse goes on in more than " +
                      std::to_string(it->second.masks->grammar().max_stacks()) +
                      " ways at once here (server.grammar_max_branches): the grammar is too "
                      "ambiguous to follow"
                : "the output cannot go on inside its grammar: no token of the vocabulary "
                  "continues it here";
        break;
      }
      if (!take(it->second, t)) {
        rr.error = msg::error_code::engine_failure;
        rr.message = "the sampler drew a token the grammar refuses";
        break;
      }
    }
  }
}

void grammar_rows::release(const std::vector<msg::request_id>& ended) {
  for (const msg::request_id id : ended) seqs_.erase(id);
}

}  // namespace courier::actors
