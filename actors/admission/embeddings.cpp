#include "actors/admission/embeddings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "actors/admission/api_error.hpp"
#include "actors/admission/http_errors.hpp"
#include "actors/admission/request_actor.hpp"

namespace courier::admission {

namespace {

struct embedding_state {
  static inline const char* name = "embeddings";
  std::shared_ptr<admission_context> ctx;
  std::shared_ptr<http::response_writer> out;
  embedding_request req;
  std::uint64_t base = 0;  // input i is request base + i
  std::vector<std::vector<float>> vectors;
  std::vector<bool> ended;
  std::size_t remaining = 0;
};

using self_ptr = request_actor::stateful_pointer<embedding_state>;

void end(self_ptr self) {
  self->state.ctx->requests_in_flight--;
  self->quit();
}

// Cancels the inputs still running.
void cancel_running(self_ptr self) {
  auto& st = self->state;
  for (std::size_t i = 0; i < st.ended.size(); ++i) {
    if (!st.ended[i]) {
      self->send(st.ctx->scheduler, msg::cancel{st.base + i, msg::cancel_reason::client_gone});
    }
  }
}

// Answers with `e`, cancelling the inputs still running.
void fail(self_ptr self, const api_error& e) {
  cancel_running(self);
  send_api_error(*self->state.out, e);
  end(self);
}

void on_event(self_ptr self, msg::token_event& e) {
  auto& st = self->state;
  if (e.id < st.base || e.id - st.base >= st.ended.size()) return;
  const std::size_t i = e.id - st.base;
  if (st.ended[i]) return;
  if (!e.embedding.empty()) st.vectors[i] = std::move(e.embedding);
  if (e.finish == msg::finish_reason::none) return;
  st.ended[i] = true;
  --st.remaining;
  if (e.finish == msg::finish_reason::error) return fail(self, scheduler_error(e.error, e.message));
  if (st.vectors[i].empty()) {
    return fail(self, api_error(500, fmt::format("input {} ended without its embedding", i), "",
                                "server_error"));
  }
  if (st.remaining > 0) return;
  std::int64_t tokens = 0;
  for (const auto& in : st.req.inputs) tokens += static_cast<std::int64_t>(in.size());
  st.out->send(200, "application/json",
               embeddings_body(st.req.model, std::move(st.vectors), st.ctx->pooling.normalize,
                               st.req.base64, tokens));
  end(self);
}

request_actor::behavior_type embedding_fn(self_ptr self, std::shared_ptr<admission_context> ctx,
                                          embedding_request req,
                                          std::shared_ptr<http::response_writer> out,
                                          std::string tenant, std::int64_t arrival_ns) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.out = std::move(out);
  st.req = std::move(req);
  const std::size_t n = st.req.inputs.size();
  st.base = st.ctx->next_request_id.fetch_add(n);
  st.vectors.resize(n);
  st.ended.assign(n, false);
  st.remaining = n;
  st.ctx->requests_in_flight++;
  msg::submit_batch batch;
  for (std::size_t i = 0; i < n; ++i) {
    msg::submit s;
    s.id = st.base + i;
    s.group = st.base;
    s.tenant = tenant;
    s.adapter = st.req.adapter;
    s.prompt = st.req.inputs[i];
    s.sampling.temperature = 0;  // the token is not wanted: the cheapest draw
    s.sampling.embed = true;
    s.max_tokens = 1;
    s.reply_to = caf::actor_cast<caf::actor>(self);
    s.arrival_ns = arrival_ns;
    batch.choices.push_back(std::move(s));
  }
  self->send(st.ctx->scheduler, std::move(batch));
  st.out->on_disconnect(
      [a = caf::actor_cast<caf::actor>(self)] { caf::anon_send(a, disconnect_atom::value); });
  return {
      [self](msg::submit_ack& a) {
        if (a.error == msg::error_code::none) return;
        auto& s = self->state;
        std::fill(s.ended.begin(), s.ended.end(), true);  // none was queued
        fail(self, scheduler_error(a.error, a.message));
      },
      [self](msg::token_event& e) { on_event(self, e); },
      [self](disconnect_atom) {
        cancel_running(self);
        end(self);
      },
  };
}

}  // namespace

void spawn_embeddings(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                      const std::string& body, std::shared_ptr<http::response_writer> out,
                      std::string tenant, std::int64_t arrival_ns) {
  if (out->disconnected()) return;
  embedding_request req;
  try {
    if (!ctx->pooling.served) {
      throw api_error(404, "this model serves no embeddings: " + ctx->pooling.refusal, "",
                      "not_found_error");
    }
    req = parse_embedding_request(body, *ctx, tenant);
  } catch (const api_error& e) {
    send_api_error(*out, e);
    return;
  } catch (const std::exception& e) {
    send_api_error(*out,
                   api_error(500, std::string("internal error: ") + e.what(), "", "server_error"));
    return;
  }
  sys.spawn(embedding_fn, std::move(ctx), std::move(req), std::move(out), std::move(tenant),
            arrival_ns);
}

}  // namespace courier::admission
