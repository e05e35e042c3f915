#include "gpu/model/generate_one.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace courier::model {

std::vector<gpu::penalty_token> penalty_tokens_for(const std::vector<token_id>& prompt,
                                                   const std::vector<token_id>& output) {
  std::unordered_map<token_id, gpu::penalty_token> m;
  for (token_id t : prompt) {
    auto& e = m[t];
    e.token = t;
    e.in_prompt = true;
  }
  for (token_id t : output) {
    auto& e = m[t];
    e.token = t;
    ++e.output_count;
  }
  std::vector<gpu::penalty_token> v;
  v.reserve(m.size());
  for (auto& [_, e] : m) v.push_back(e);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.token < b.token; });
  return v;
}

namespace {

// The table of the one sequence: blocks 0.. of what the whole sequence needs; the length it may
// reach (max_model_len, or the config's).
std::vector<std::int32_t> sequence_table(const kv_cache& cache, const generate_request& req,
                                         std::int64_t max_len) {
  const std::int64_t prompt_len = static_cast<std::int64_t>(req.prompt.size());
  if (prompt_len >= max_len) {
    throw std::invalid_argument("the prompt has " + std::to_string(prompt_len) +
                                " tokens; max_model_len is " + std::to_string(max_len));
  }
  const std::int64_t total = std::min<std::int64_t>(prompt_len + req.max_tokens, max_len);
  const std::int64_t blocks = (total + cache.block_size() - 1) / cache.block_size();
  if (blocks > cache.num_blocks()) {
    throw std::invalid_argument("the sequence needs " + std::to_string(blocks) +
                                " KV blocks; the cache has " + std::to_string(cache.num_blocks()));
  }
  std::vector<std::int32_t> table(static_cast<std::size_t>(blocks));
  for (std::int64_t i = 0; i < blocks; ++i) table[i] = static_cast<std::int32_t>(i);
  return table;
}

// The step feeding `n` pending tokens at `pos`, in slot 0 of the model's per-sequence state:
// its table written whole, and the last chunk of what is pending samples with the request's
// penalties (counted here over the prompt and `output`, written into the slot's list each
// step), mask and bias (likewise written each step).
forward_batch step_of(const model_config& cfg, const generate_request& req,
                      const std::vector<token_id>& pending, std::size_t n, std::int32_t pos,
                      const std::vector<std::int32_t>& table,
                      const std::vector<token_id>& output) {
  forward_batch fb;
  forward_row row;
  row.tokens.assign(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
  row.start_pos = pos;
  row.block_table = table;
  row.table_slot = 0;
  row.table_keep = 0;
  if (cfg.hybrid()) row.state_slot = 0;  // one sequence: state row 0
  row.lora_slot = req.lora_slot;
  const bool last_chunk = n == pending.size();
  row.logits = last_chunk ? logits_mode::last : logits_mode::none;
  row.sample = last_chunk;
  row.sampling = req.sampling;
  row.sampling.draw_index = output.size();
  if (last_chunk) {
    const bool penalised = req.sampling.repetition_penalty != 1.0f ||
                           req.sampling.presence_penalty != 0.0f ||
                           req.sampling.frequency_penalty != 0.0f;
    if (penalised) {
      row.penalty_slot = 0;
      row.penalty_init = true;
      fb.penalty_tokens = penalty_tokens_for(req.prompt, output);
      row.sampling.penalty_begin = 0;
      row.sampling.penalty_count = static_cast<std::int32_t>(fb.penalty_tokens.size());
    }
    if (req.mask) {
      fb.mask_words.assign(static_cast<std::size_t>(gpu::mask_words_per_row(cfg.vocab_size)), 0u);
      req.mask(output, fb.mask_words);
      row.sampling.mask_begin = 0;
    }
    if (!req.bias_tokens.empty()) {
      row.bias_slot = 0;
      row.bias_init = true;
      fb.bias_tokens = req.bias_tokens;
      row.sampling.bias_begin = 0;
      row.sampling.bias_count = static_cast<std::int32_t>(fb.bias_tokens.size());
    }
    if (static_cast<std::int64_t>(output.size()) < req.min_tokens) {
      fb.end_tokens.assign(req.stop_token_ids.begin(), req.stop_token_ids.end());
      if (!req.ignore_eos) {
        fb.end_tokens.insert(fb.end_tokens.end(), cfg.eos_token_ids.begin(),
                             cfg.eos_token_ids.end());
      }
      row.sampling.end_until = static_cast<std::uint64_t>(req.min_tokens);
      row.sampling.end_begin = 0;
      row.sampling.end_count = static_cast<std::int32_t>(fb.end_tokens.size());
    }
  }
  fb.rows.push_back(std::move(row));
  return fb;
}

}  // namespace

generate_result generate_one(llama_model& model, kv_cache& cache, const generate_request& req) {
  const model_config& cfg = model.config();
  if (req.prompt.empty()) throw std::invalid_argument("the prompt is empty");
  const std::int64_t max_len = req.max_model_len > 0 ? req.max_model_len
                                                     : cfg.max_position_embeddings;
  const std::vector<std::int32_t> table = sequence_table(cache, req, max_len);
  model.reserve_slots(1, static_cast<std::int64_t>(table.size()) * cache.block_size(),
                      cache.block_size());
  generate_result out;
  auto stops = [&](token_id t) {
    if (std::find(req.stop_token_ids.begin(), req.stop_token_ids.end(), t) !=
        req.stop_token_ids.end())
      return true;
    return !req.ignore_eos &&
           std::find(cfg.eos_token_ids.begin(), cfg.eos_token_ids.end(), t) !=
               cfg.eos_token_ids.end();
  };
  std::vector<token_id> pending = req.prompt;  // tokens not yet in the cache
  std::int32_t pos = 0;
  while (static_cast<std::int32_t>(out.tokens.size()) < req.max_tokens) {
    const std::int32_t chunk = req.prefill_chunk > 0 ? req.prefill_chunk
                                                     : static_cast<std::int32_t>(pending.size());
    const std::size_t n = std::min<std::size_t>(pending.size(), static_cast<std::size_t>(chunk));
    const bool last_chunk = n == pending.size();
    forward_output fo = model.forward(step_of(cfg, req, pending, n, pos, table, out.tokens), cache);
    pos += static_cast<std::int32_t>(n);
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
    if (!last_chunk) continue;
    const token_id t = fo.rows[0].samples.at(0).token;
    if (t == gpu::no_allowed_token) {
      out.finish_reason = "error";
      return out;
    }
    out.tokens.push_back(t);
    out.samples.push_back(std::move(fo.rows[0].samples.at(0)));
    if (stops(t)) {
      out.finish_reason = "stop";
      return out;
    }
    if (pos + 1 >= max_len) break;  // prompt + output may not exceed max_model_len
    pending.push_back(t);
  }
  out.finish_reason = "length";
  return out;
}

}  // namespace courier::model
