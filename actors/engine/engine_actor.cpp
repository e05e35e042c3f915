#include "actors/engine/engine_actor.hpp"

#include <chrono>
#include <exception>

namespace courier::actors {

model::forward_batch to_forward_batch(const msg::step_plan& plan) {
  model::forward_batch fb;
  fb.rows.reserve(plan.rows.size());
  for (const msg::plan_row& r : plan.rows) {
    model::forward_row row;
    row.tokens = r.tokens;
    row.start_pos = r.start_pos;
    row.block_table = r.block_table;
    row.logits = r.sample ? model::logits_mode::last : model::logits_mode::none;
    row.sample = r.sample;
    if (r.sample) {
      const msg::sampling_params& s = r.sampling;
      gpu::sampling_row& g = row.sampling;
      g.temperature = s.temperature;
      g.top_k = s.top_k;
      g.top_p = s.top_p;
      g.min_p = s.min_p;
      g.repetition_penalty = s.repetition_penalty;
      g.presence_penalty = s.presence_penalty;
      g.frequency_penalty = s.frequency_penalty;
      g.seed = s.seed;
      g.draw_index = r.draw_index;
      g.num_logprobs = s.logprobs > 0 ? s.logprobs : 0;
      g.penalty_begin = static_cast<std::int32_t>(fb.penalty_tokens.size());
      g.penalty_count = static_cast<std::int32_t>(r.penalties.size());
      for (const msg::penalty_entry& p : r.penalties) {
        fb.penalty_tokens.push_back({p.token, p.output_count, p.in_prompt});
      }
    }
    fb.rows.push_back(std::move(row));
  }
  return fb;
}

msg::step_result to_step_result(const msg::step_plan& plan, model::forward_output&& out) {
  msg::step_result res;
  res.step = plan.step;
  res.rows.resize(plan.rows.size());
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::row_result& rr = res.rows[i];
    rr.seq = plan.rows[i].seq;
    if (!plan.rows[i].sample) continue;
    gpu::sample_result& s = out.rows[i].sampled;
    rr.tokens.push_back(s.token);
    if (plan.rows[i].sampling.logprobs >= 0) {
      rr.logprobs.push_back({s.token, s.logprob, std::move(s.top_ids), std::move(s.top_logprobs)});
    }
  }
  return res;
}

engine_actor::behavior_type engine_fn(engine_actor::pointer self,
                                      std::shared_ptr<engine_resources> res) {
  (void)self;
  return {
      [res](msg::ready_atom) {
        msg::engine_ready r;
        const model::model_config& c = res->model->config();
        r.num_kv_blocks = res->cache->num_blocks();
        r.block_size = res->cache->block_size();
        r.vocab_size = c.vocab_size;
        r.max_model_len = res->max_model_len;
        r.eos_token_ids = c.eos_token_ids;
        r.model_name = res->model_name;
        r.device_name = res->dev->name();
        return r;
      },
      [res](msg::step_plan& plan) {
        const auto t0 = std::chrono::steady_clock::now();
        msg::step_result r;
        try {
          r = to_step_result(plan, res->model->forward(to_forward_batch(plan), *res->cache));
        } catch (const std::exception& e) {
          // The step fails; the engine, its memory and the other requests carry on.
          r = {};
          r.step = plan.step;
          r.error = msg::error_code::engine_failure;
          r.message = e.what();
        }
        r.forward_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        return r;
      },
  };
}

}  // namespace courier::actors
