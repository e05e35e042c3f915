#pragma once
// The OpenAI-compatible HTTP front: routes, auth (bearer key -> tenant), and one request actor
// per generation request. Owns the HTTP server; borrows the actor system.
#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/http/cors.hpp"
#include "actors/admission/http/server.hpp"
#include "actors/admission/routes.hpp"
#include "actors/admission/text_pool.hpp"
#include "actors/config/config.hpp"

namespace courier::admission {

class admission_server {
 public:
  // Binds host:port (throws std::runtime_error when it cannot).
  // on_text_thread_start and on_bulk_thread_start (optional) run first on each thread of the
  // ordinary and the large-body lane (serve lowers their priority there: the bulk lane's most);
  // the grammar lane's threads get on_bulk_thread_start too: a compile takes up to the limits'
  // CPU time, on CPU nothing else wants (its limit counts its CPU, not its wait).
  admission_server(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                   const config::server_config& cfg,
                   std::function<void()> on_text_thread_start = {},
                   std::function<void()> on_bulk_thread_start = {});
  ~admission_server();

  std::uint16_t port() const;
  // Requests whose response is not completely written (the transport's count).
  std::size_t num_in_flight() const;
  // Stops accepting; lets in-flight requests finish for up to `grace`, then closes.
  void stop(std::chrono::milliseconds grace);
  // Where bodies are parsed and tokenized: bodies up to large_body_bytes on text_jobs(), larger
  // ones on bulk_text_jobs(), so that a flood of megabyte bodies (each seconds of tokenizing)
  // never queues an ordinary request behind it. (Tests occupy them to show what does not wait.)
  static constexpr std::size_t large_body_bytes = 1 << 20;
  text_pool& text_jobs() { return *text_; }
  text_pool& bulk_text_jobs() { return *bulk_; }
  // Where grammars are compiled (spawn_request's grammar_lane), apart from both: a grammar takes
  // up to the grammar limits' time, and holds up only the requests that need one compiled.
  text_pool& grammar_jobs() { return *grammar_; }

 private:
  void handle(http::request req, std::shared_ptr<http::response_writer> out);
  // handle()'s parts: what is answered before the key is checked, and a route a key may call.
  bool answered_without_key(const http::request& req, const std::optional<route_match>& match,
                            std::shared_ptr<http::response_writer>& out);
  void answer_route(const route_match& match, const std::string& tenant, http::request& req,
                    std::shared_ptr<http::response_writer>& out, std::int64_t arrival_ns);
  void serve_metrics(std::shared_ptr<http::response_writer> out);
  void serve_web(http::response_writer& out, const std::string& path);
  // GET (HEAD) or DELETE /v1/responses/{id}: on the text pool (a kept response may be large).
  void serve_stored_response(const std::string& id, const std::string& tenant,
                             const std::string& method,
                             std::shared_ptr<http::response_writer> out);
  text_pool& pool_for(const std::string& body) {
    return body.size() > large_body_bytes ? *bulk_ : *text_;
  }
  nlohmann::json model_object(const std::string& id) const;

  caf::actor_system& sys_;  // Borrowed; outlives this server.
  std::shared_ptr<admission_context> ctx_;
  http::cors_policy cors_;  // for preflights; the transport adds the headers of every response
  // Declared before http_, so destroyed after it: no job is posted once the pool drains; the
  // grammar lane before the others, so destroyed after them (their jobs post to it).
  std::unique_ptr<text_pool> grammar_, text_, bulk_;
  std::unique_ptr<http::server> http_;
};

// Loads the tokenizer and chat template of a model folder into a context (both optional).
void load_text_assets(const std::string& model_dir, admission_context& ctx);

}  // namespace courier::admission
