#pragma once
// One short-lived actor per HTTP request to /v1/completions, /v1/chat/completions, /v1/messages
// (Anthropic) or /v1/responses (the last two translated to and from chat: api_format): submits
// its choices to the scheduler, turns token_events into text (incremental detokenizer, stop
// strings), writes SSE chunks or one JSON body, and cancels its work when the client goes away.
//
//   spawned ──submit_batch(prompts·n)──► submitted ──ack: accepted──► running
//                                            │                          │ (stream: 200 now)
//                                            │ ack: refused             │ all choices ended
//                                            ▼                          ▼
//                                   error status + JSON, quit    respond, quit
//   submitted or running ── client gone ──► cancel the unfinished (client_gone), quit
// A stop string that matches cancels that choice with reason stop_string (a normal finish).
#include <caf/all.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/api_format.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/http_errors.hpp"
#include "actors/admission/http/server.hpp"
#include "actors/admission/text_pool.hpp"

namespace courier::admission {

using disconnect_atom = caf::atom_constant<caf::atom("disconnect")>;

// What a request actor takes: the scheduler's answer to its submit_batch, its choices' token
// events, and the client going away (sent from the HTTP I/O thread).
using request_actor = caf::typed_actor<caf::reacts_to<msg::submit_ack>,
                                       caf::reacts_to<msg::token_event>,
                                       caf::reacts_to<disconnect_atom>>;

// Parses, templates and tokenizes the body on the calling thread (the server calls it on its
// text_pool, never on the HTTP I/O thread or a CAF worker); a grammar the output is held to is
// compiled on `grammar_lane` (null: on the calling thread too), so that a slow grammar holds up
// only the requests that need one compiled. Then spawns the request actor, which submits the
// request and relays its tokens. A bad body is answered with its api_error and no actor is
// spawned; nor is one when the client is already gone. arrival_ns (steady clock): when the HTTP
// request arrived; the latencies count from it. `format`: the API the body and the response are
// in (kind is then chat).
void spawn_request(caf::actor_system& sys, std::shared_ptr<admission_context> ctx, endpoint kind,
                   const std::string& body, std::shared_ptr<http::response_writer> out,
                   std::string tenant, std::int64_t arrival_ns,
                   api_format format = api_format::openai, text_pool* grammar_lane = nullptr);

// The HTTP status for a scheduler error code, and the error a client is answered with (type
// server_overloaded for overloaded, server_error for other 5xx, else invalid_request_error).
int http_status_of(msg::error_code c);
api_error scheduler_error(msg::error_code code, const std::string& message);

// Error responses go through http_errors.hpp (error_headers: Retry-After on every 503).

}  // namespace courier::admission
