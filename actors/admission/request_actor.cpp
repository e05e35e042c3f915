#include "actors/admission/request_actor.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/admission/api_response.hpp"
#include "actors/admission/stop_strings.hpp"
#include "actors/telemetry/trace.hpp"
#include "text/tokenizer/incremental_detokenizer.hpp"

namespace courier::admission {

int http_status_of(msg::error_code c) {
  switch (c) {
    case msg::error_code::none: return 200;
    case msg::error_code::invalid_request: return 400;
    case msg::error_code::too_long: return 400;
    case msg::error_code::overloaded: return 503;
    case msg::error_code::engine_failure: return 500;
    case msg::error_code::shutting_down: return 503;
  }
  return 500;
}

api_error scheduler_error(msg::error_code code, const std::string& message) {
  const int status = http_status_of(code);
  return api_error(status, message, "",
                   code == msg::error_code::overloaded ? "server_overloaded"
                   : status >= 500                     ? "server_error"
                                                       : "invalid_request_error");
}

struct choice_state {
  msg::request_id id = 0;
  choice_output out;                      // everything so far (non-streaming) or unsent delta
  std::optional<text::incremental_detokenizer> detok;
  std::optional<stop_matcher> stops;
  bool include_stop = false;  // include_stop_str_in_output: the matched stop ends the text
  // vLLM's min_tokens: no stop string ends in the text of the first min_tokens tokens.
  std::size_t min_tokens = 0;
  std::size_t num_tokens = 0;  // output tokens received
  std::optional<chat_output_parser> parser;  // chat with reasoning or tools to read
  bool first_chunk = true;
  bool done = false;
  msg::usage use;
};

struct request_state {
  static inline const char* name = "request";
  std::shared_ptr<admission_context> ctx;
  api_request req;
  std::shared_ptr<http::response_writer> out;
  api_format format = api_format::openai;
  std::optional<format_writer> writer;  // the response in the API's shape
  response_header header;
  std::vector<choice_state> choices;
  std::unordered_map<msg::request_id, std::size_t> by_id;
  std::size_t remaining = 0;
  std::optional<api_error> failure;  // the first error event, answered when all have ended
  bool streaming = false;            // the 200 and the SSE headers are written

  // Trace spans name a request by its first choice's id.
  msg::request_id first_id() const { return choices.empty() ? 0 : choices.front().id; }
};

namespace {

using self_ptr = request_actor::stateful_pointer<request_state>;

const text::tokenizer* tok_of(self_ptr self) { return self->state.ctx->tok.get(); }

void add_pieces(choice_state& c, chat_pieces& p) {
  c.out.text += p.content;
  c.out.reasoning += p.reasoning;
  for (auto& call : p.calls) add_call_piece(c.out.tool_calls, std::move(call));
}

// Output text that passed the stop strings: the content, or what the chat parsers make of it.
void add_final_text(choice_state& c, const std::string& text) {
  if (!c.parser) {
    c.out.text += text;
    return;
  }
  chat_pieces p;
  c.parser->push(text, p);
  add_pieces(c, p);
}

// Text that became final for a choice: through the stop matcher; marks a stop-string hit (and
// ends the text with the stop string when the request asked for it).
void add_text(choice_state& c, const std::string& piece) {
  if (!c.stops) return add_final_text(c, piece);
  const bool matched_before = c.stops->matched();
  std::string text = c.stops->push(piece, c.num_tokens > c.min_tokens);
  if (c.stops->matched() && !matched_before && c.include_stop) text += c.stops->matched_stop();
  add_final_text(c, text);
  if (c.stops->matched() && !c.done) c.out.finish_reason = "stop";
}

// The choice's output has ended: the parsers give up what they held; a normal end after tool
// calls is "tool_calls", as OpenAI reports it.
void end_text(choice_state& c) {
  if (!c.parser) return;
  chat_pieces p;
  c.parser->finish(p);
  add_pieces(c, p);
  if (c.parser->called() && c.out.finish_reason == "stop") c.out.finish_reason = "tool_calls";
}

void send_error(self_ptr self, const api_error& e) {
  send_api_error(*self->state.out, e, self->state.format);
}

// The stop string that ended the (first) choice, for Anthropic's stop_sequence.
std::optional<std::string> matched_stop(const request_state& st) {
  if (st.choices.empty() || !st.choices.front().stops || !st.choices.front().stops->matched()) {
    return std::nullopt;
  }
  return st.choices.front().stops->matched_stop();
}

// Holds a choice's text until the stream has started (it starts once the scheduler has
// accepted the request, so that a refusal can still be a plain HTTP error).
void flush_stream(self_ptr self, choice_state& c) {
  auto& st = self->state;
  if (!st.req.stream || !st.streaming) return;
  if (c.out.text.empty() && c.out.reasoning.empty() && c.out.tool_calls.empty() &&
      c.out.finish_reason.empty() && c.out.logprobs.empty() && c.out.prompt_logprobs.empty() &&
      !c.first_chunk)
    return;
  st.out->write_chunk(
      st.writer->chunk(stream_chunk(st.req, st.header, c.out, c.first_chunk, tok_of(self))));
  c.first_chunk = false;
  c.out.text.clear();
  c.out.reasoning.clear();
  c.out.tool_calls.clear();
  c.out.logprobs.clear();
  c.out.token_ids.clear();
  c.out.prompt_first.reset();
  c.out.prompt_logprobs.clear();
}

void finish_request(self_ptr self) {
  auto& st = self->state;
  // The answer is made inside the span and leaves after it: a client that has its answer may
  // stop the server at once, and the trace the server's end drains must hold this span (it used
  // to end after the send, racing that drain).
  std::vector<std::string> chunks;  // a stream's last writes, in order
  std::optional<std::string> body;  // or the whole answer
  {
    telemetry::scoped_span span("admission", "finish", st.first_id());
    usage_totals u;
    for (std::size_t i = 0; i < st.choices.size(); ++i) {
      const auto& c = st.choices[i];
      if (i % static_cast<std::size_t>(st.req.n) == 0) {  // a prompt counts once, not once per n
        u.prompt_tokens += c.use.prompt_tokens;
        u.cached_tokens += c.use.cached_tokens;
      }
      u.completion_tokens += c.use.completion_tokens;
    }
    if (st.failure && st.streaming) {
      chunks = {st.writer->chunk(st.failure->to_json()), st.writer->end()};
    } else if (!st.failure && st.req.stream) {
      if (st.req.include_usage) {
        chunks.push_back(st.writer->chunk(usage_chunk(st.req, st.header, u)));
      }
      chunks.push_back(st.writer->end(matched_stop(st)));
    } else if (!st.failure) {
      std::vector<choice_output> outs;
      for (auto& c : st.choices) outs.push_back(c.out);
      body = st.writer->whole(full_response(st.req, st.header, outs, u, tok_of(self)),
                              matched_stop(st));
    }
  }
  if (body) {
    st.out->send(200, "application/json", std::move(*body));
  } else if (st.failure && !st.streaming) {
    send_error(self, *st.failure);
  } else {
    for (std::string& c : chunks) st.out->write_chunk(std::move(c));
    st.out->end_stream();
  }
  st.ctx->requests_in_flight--;
  self->quit();
}

void on_event(self_ptr self, msg::token_event& e) {
  auto& st = self->state;
  telemetry::scoped_span span("admission", "token_event", e.id);
  auto it = st.by_id.find(e.id);
  if (it == st.by_id.end()) return;
  choice_state& c = st.choices[it->second];
  if (c.done) return;  // e.g. the cancel after a stop string
  c.use = e.use;
  if (!e.prompt_logprobs.empty()) c.out.prompt_logprobs = std::move(e.prompt_logprobs);
  // A stop finish ends on the stop token (EOS or a stop_token_ids one): OpenAI lists no logprob
  // for it.
  const std::size_t stop_token_at =
      e.finish == msg::finish_reason::stop && !e.tokens.empty() ? e.tokens.size() - 1 : SIZE_MAX;
  for (std::size_t i = 0; i < e.tokens.size() && !c.out.finish_reason.size(); ++i) {
    c.out.token_ids.push_back(e.tokens[i]);
    ++c.num_tokens;
    if (i < e.logprobs.size() && i != stop_token_at) c.out.logprobs.push_back(e.logprobs[i]);
    if (c.detok) add_text(c, c.detok->push(e.tokens[i]));
  }
  if (!c.out.finish_reason.empty()) {  // a stop string matched: a normal finish, sooner
    self->send(st.ctx->scheduler, msg::cancel{c.id, msg::cancel_reason::stop_string});
    c.use.completion_tokens = static_cast<std::int32_t>(e.use.completion_tokens);
  } else if (e.finish != msg::finish_reason::none) {
    if (c.detok) add_text(c, c.detok->flush());
    if (c.stops && !c.stops->matched()) add_final_text(c, c.stops->flush());
    switch (e.finish) {
      case msg::finish_reason::stop: c.out.finish_reason = "stop"; break;
      case msg::finish_reason::length: c.out.finish_reason = "length"; break;
      case msg::finish_reason::cancelled: c.out.finish_reason = "abort"; break;
      case msg::finish_reason::error:
        if (!st.failure) st.failure = scheduler_error(e.error, e.message);
        c.out.finish_reason = "error";
        break;
      case msg::finish_reason::none: break;
    }
  }
  if (!c.out.finish_reason.empty()) {
    end_text(c);
    c.done = true;
    --st.remaining;
  }
  if (!st.failure) flush_stream(self, c);
  if (st.remaining == 0) finish_request(self);
}

// The scheduler queued all the choices (the stream starts now) or none (a plain HTTP error,
// at once; the choices' error events that follow find the actor gone).
void on_ack(self_ptr self, msg::submit_ack& a) {
  auto& st = self->state;
  telemetry::scoped_span span("admission", "submit_ack", st.first_id());
  if (a.error == msg::error_code::none) {
    if (st.req.stream && !st.streaming) {
      st.out->start_stream(200, "text/event-stream");
      st.streaming = true;
      // Only what is already pending: a choice's first chunk goes out with its first token, so
      // clients time the first token from it (as before the acknowledgement existed).
      for (auto& c : st.choices) {
        if (!c.out.text.empty() || !c.out.reasoning.empty() || !c.out.tool_calls.empty() ||
            !c.out.finish_reason.empty() || !c.out.logprobs.empty() ||
            !c.out.prompt_logprobs.empty()) {
          flush_stream(self, c);
        }
      }
    }
    return;
  }
  for (auto& c : st.choices) c.done = true;
  st.remaining = 0;
  st.failure = scheduler_error(a.error, a.message);
  finish_request(self);
}

// The request's choices: n for each prompt, each with its detokenizer, stop matcher and
// parser, ids from `base`.
void add_choices(request_state& st, std::uint64_t base) {
  std::int32_t index = 0;
  for (std::size_t p = 0; p < st.req.prompts.size(); ++p) {
    for (std::int32_t k = 0; k < st.req.n; ++k, ++index) {
      choice_state c;
      c.id = base + static_cast<std::uint64_t>(index);
      c.out.index = index;
      if (st.ctx->tok) c.detok.emplace(*st.ctx->tok, st.req.skip_special_tokens);
      if (!st.req.stop.empty()) c.stops.emplace(st.req.stop);
      c.include_stop = st.req.include_stop_str_in_output;
      c.min_tokens = static_cast<std::size_t>(st.req.sampling.min_tokens);
      if (st.req.read_reasoning || st.req.read_tool_calls) {
        c.parser.emplace(st.req.read_reasoning, st.req.starts_in_reasoning, st.req.read_tool_calls);
      }
      c.use.prompt_tokens = static_cast<std::int32_t>(st.req.prompts[p].size());
      if (st.req.echo && st.ctx->tok) c.out.text = st.ctx->tok->decode(st.req.prompts[p]);
      c.out.text += st.req.echo_text;  // chat: the final assistant message's
      if (st.req.echo && st.req.logprobs >= 0) c.out.prompt_first = st.req.prompts[p].front();
      st.by_id[c.id] = st.choices.size();
      st.choices.push_back(std::move(c));
    }
  }
}

// All choices in one message: the scheduler queues all or none, and acknowledges first.
msg::submit_batch submits_of(self_ptr self, std::uint64_t base, const std::string& tenant,
                             std::int64_t arrival_ns) {
  const request_state& st = self->state;
  msg::submit_batch batch;
  batch.choices.reserve(st.choices.size());
  for (std::size_t i = 0; i < st.choices.size(); ++i) {
    msg::submit s;
    s.id = st.choices[i].id;
    s.group = base;  // one fairness group per HTTP request
    s.tenant = tenant;
    s.adapter = st.req.adapter;
    s.prompt = st.req.prompts[i / static_cast<std::size_t>(st.req.n)];
    s.sampling = st.req.sampling;
    if (s.sampling.has_seed) s.sampling.seed += i;  // n choices with one seed still differ
    s.stop_token_ids = st.req.stop_token_ids;
    s.max_tokens = st.req.max_tokens;
    s.ignore_eos = st.req.ignore_eos;
    s.reply_to = caf::actor_cast<caf::actor>(self);
    s.arrival_ns = arrival_ns;
    batch.choices.push_back(std::move(s));
  }
  return batch;
}

// The client went away: everything still running is cancelled.
void disconnected(self_ptr self) {
  auto& s = self->state;
  telemetry::scoped_span span("admission", "disconnect", s.first_id());
  for (auto& c : s.choices) {
    if (!c.done) {
      self->send(s.ctx->scheduler, msg::cancel{c.id, msg::cancel_reason::client_gone});
    }
  }
  s.ctx->requests_in_flight--;
  self->quit();
}

request_actor::behavior_type request_fn(self_ptr self, std::shared_ptr<admission_context> ctx,
                                        api_request req, std::shared_ptr<http::response_writer> out,
                                        std::string tenant, std::int64_t arrival_ns,
                                        api_format format, client_body client) {
  auto& st = self->state;
  // From the actor's start until the submits are sent. The HTTP arrival (on the I/O thread,
  // earlier) is a zero-length mark of its own, so that spans on one thread still nest.
  std::optional<telemetry::scoped_span> span;
  st.ctx = std::move(ctx);
  st.out = std::move(out);
  st.req = std::move(req);
  st.format = format;
  const bool chat = st.req.kind == endpoint::chat;
  const std::uint64_t base = st.ctx->next_request_id.fetch_add(
      st.req.prompts.size() * static_cast<std::size_t>(st.req.n));
  span.emplace("admission", "http_request", base);
  if (span->active()) {
    telemetry::span arrival;
    arrival.actor = "admission";
    arrival.message = "arrival";
    arrival.request = base;
    arrival.start_ns = arrival_ns;
    telemetry::record(arrival);
    std::string http_id = st.out->request_id();
    if (st.ctx->telemetry && !http_id.empty()) {
      self->send(st.ctx->telemetry, msg::request_label{base, std::move(http_id)});
    }
  }
  st.header.id = response_id(chat ? "chatcmpl-" : "cmpl-");
  if (!st.req.ignored_fields.empty() && st.ctx->telemetry) {
    self->send(st.ctx->telemetry, msg::admission_report{std::move(st.req.ignored_fields)});
  }
  st.header.created = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  st.header.model = st.req.model;  // the base's name or the adapter's, as asked
  st.ctx->requests_in_flight++;

  add_choices(st, base);
  st.remaining = st.choices.size();
  st.writer.emplace(format, st.header.id, st.header.created, st.header.model,
                    st.choices.empty() ? 0 : st.choices.front().use.prompt_tokens,
                    std::move(client));
  request_actor::behavior_type handlers{
      [self](msg::submit_ack& a) { on_ack(self, a); },
      [self](msg::token_event& e) { on_event(self, e); },
      [self](disconnect_atom) { disconnected(self); },
  };
  if (st.req.max_tokens == 0 && st.req.logprobs < 0) {  // echo only: nothing to compute
    if (st.req.stream) {
      st.out->start_stream(200, "text/event-stream");
      st.streaming = true;
    }
    for (auto& c : st.choices) {
      c.out.finish_reason = "length";
      c.done = true;
      flush_stream(self, c);
    }
    st.remaining = 0;
    finish_request(self);  // quits: no message reaches the handlers
    return handlers;
  }
  self->send(st.ctx->scheduler, submits_of(self, base, tenant, arrival_ns));
  // The client going away cancels everything still running (called on the I/O thread).
  st.out->on_disconnect([a = caf::actor_cast<caf::actor>(self)] {
    caf::anon_send(a, disconnect_atom::value);
  });
  return handlers;
}

}  // namespace

namespace {

// Runs `step` (a part of admitting a request); its api_error, or any other exception as a 500,
// is the answer. False when it failed (answered).
template <class Step>
bool admit_step(http::response_writer& out, api_format format, Step&& step) {
  try {
    step();
    return true;
  } catch (const api_error& e) {
    send_api_error(out, e, format);
  } catch (const std::exception& e) {
    send_api_error(
        out, api_error(500, std::string("internal error: ") + e.what(), "", "server_error"),
        format);
  }
  return false;
}

}  // namespace

void spawn_request(caf::actor_system& sys, std::shared_ptr<admission_context> ctx, endpoint kind,
                   const std::string& body, std::shared_ptr<http::response_writer> out,
                   std::string tenant, std::int64_t arrival_ns, api_format format,
                   text_pool* grammar_lane) {
  if (out->disconnected()) return;  // nobody is waiting for it
  auto req = std::make_shared<api_request>();
  auto client = std::make_shared<client_body>();
  const bool parsed = admit_step(*out, format, [&] {
    const std::string chat_body = chat_body_of(format, kind == endpoint::chat, body,
                                               ctx->max_json_depth, ctx->responses, tenant,
                                               *client);
    *req = parse_request_fields(format == api_format::openai ? kind : endpoint::chat, chat_body,
                                *ctx);
    require_tenant_model(req->model, *ctx, tenant);
    // Their streams end with the usage (Anthropic's message_delta, response.completed).
    if (format == api_format::anthropic || format == api_format::responses) {
      req->include_usage = req->stream;
    }
  });
  if (!parsed) return;
  auto compile_then_spawn = [&sys, ctx, req, client, out, tenant = std::move(tenant),
                             arrival_ns, format]() mutable {
    if (out->disconnected()) return;
    if (!admit_step(*out, format, [&] { compile_request_grammar(*req, *ctx, tenant); })) return;
    sys.spawn(request_fn, std::move(ctx), std::move(*req), std::move(out), std::move(tenant),
              arrival_ns, format, std::move(*client));
  };
  if (req->grammar_to_compile && grammar_lane) {
    grammar_lane->post(std::move(compile_then_spawn));
  } else {
    compile_then_spawn();
  }
}

}  // namespace courier::admission
