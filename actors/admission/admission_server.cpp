#include "actors/admission/admission_server.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/admission/api_request.hpp"
#include "actors/admission/api_response.hpp"
#include "actors/admission/auth.hpp"
#include "actors/admission/embeddings.hpp"
#include "actors/admission/http_errors.hpp"
#include "actors/admission/lora_routes.hpp"
#include "actors/admission/request_actor.hpp"
#include "actors/admission/routes.hpp"
#include "actors/admission/token_routes.hpp"
#include "actors/admission/web_assets.hpp"
#include "actors/telemetry/scrape_merge.hpp"
#include "actors/telemetry/trace.hpp"

namespace courier::admission {

using nlohmann::json;

namespace {

// Anthropic's API and the paths under it.
bool anthropic_path(const std::string& target) {
  const std::string_view t = target;
  constexpr std::string_view api = "/v1/messages";
  return t.substr(0, api.size()) == api &&
         (t.size() == api.size() || t[api.size()] == '/' || t[api.size()] == '?');
}

void send_json(const std::shared_ptr<http::response_writer>& out, int status, const json& j) {
  out->send(status, "application/json", wire(j));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// tokenizer_config.json writes special tokens as "text" or {"content": "text", ...}.
std::string token_string(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return {};
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"];
  return {};
}

// A Prometheus label value: backslash, double quote and newline escaped.
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The transport's counters, in the exposition format the telemetry actor writes.
std::string transport_metrics(const std::string& model_name, std::uint64_t num_overflows) {
  return "# HELP courier:stream_buffer_overflows_total Streams closed because the client read "
         "too slowly (server.max_stream_buffer_bytes).\n"
         "# TYPE courier:stream_buffer_overflows_total counter\n"
         "courier:stream_buffer_overflows_total{model_name=\"" +
         label_value(model_name) + "\"} " + std::to_string(num_overflows) + "\n";
}

// Arguments go through spawn, not a capture: CAF 0.17 dereferences a null argument tuple when a
// function actor is spawned without any (UBSan reports it). transport_text: the HTTP server's
// own metrics, read on the I/O thread, appended to the telemetry actor's. router: a front
// end's (null otherwise), whose replicas' metrics are merged in, family by family.
void scrape_fn(caf::event_based_actor* self, actors::telemetry_actor tel,
               std::shared_ptr<http::response_writer> out, std::string transport_text,
               caf::actor router) {
  self->request(tel, caf::infinite, msg::scrape_atom_v)
      .then(
          [self, out, transport_text, router](const std::string& text) {
            const char* type = "text/plain; version=0.0.4; charset=utf-8";
            if (text.empty()) {
              send_api_error(*out, api_error(404, "metrics are off (telemetry.metrics)", "",
                                             "not_found_error"));
            } else if (!router) {
              out->send(200, type, text + transport_text);
            } else {
              const std::string own = text + transport_text;
              self->request(router, std::chrono::seconds(30), msg::scrape_atom_v)
                  .then(
                      [out, own, type](const std::string& replicas) {
                        out->send(200, type,
                                  telemetry::merge_scrapes({{"", own}, {"", replicas}}));
                      },
                      [out, own, type](const caf::error&) { out->send(200, type, own); });
            }
          },
          [out](const caf::error& e) {
            send_api_error(*out, api_error(500, "metrics unavailable: " + caf::to_string(e), "",
                                           "server_error"));
          });
}

}  // namespace

void load_text_assets(const std::string& model_dir, admission_context& ctx) {
  const std::filesystem::path dir(model_dir);
  if (!std::filesystem::exists(dir / "tokenizer.json")) return;
  ctx.tok = std::make_shared<const text::tokenizer>(
      text::tokenizer::load((dir / "tokenizer.json").string()));
  std::string source;
  if (std::filesystem::exists(dir / "tokenizer_config.json")) {
    json cfg;
    try {
      cfg = json::parse(read_file(dir / "tokenizer_config.json"));
    } catch (const json::parse_error& e) {
      throw std::runtime_error((dir / "tokenizer_config.json").string() + ": " + e.what());
    }
    ctx.bos_token = token_string(cfg, "bos_token");
    ctx.eos_token = token_string(cfg, "eos_token");
    if (cfg.contains("chat_template")) {
      const json& t = cfg["chat_template"];
      if (t.is_string()) {
        source = t.get<std::string>();
      } else if (t.is_array()) {
        for (const json& e : t) {
          if (e.value("name", "") == "default") source = e.value("template", "");
        }
      }
    }
  }
  if (source.empty() && std::filesystem::exists(dir / "chat_template.jinja")) {
    source = read_file(dir / "chat_template.jinja");
  }
  ctx.chat_template_source = source;
  if (!source.empty()) {
    ctx.chat = std::make_shared<const text::jinja::chat_template>(
        text::jinja::chat_template::parse(source));
  }
}

admission_server::admission_server(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                                   const config::server_config& cfg,
                                   std::function<void()> on_text_thread_start,
                                   std::function<void()> on_bulk_thread_start)
    : sys_(sys),
      ctx_(std::move(ctx)),
      cors_(cfg.server.cors_allowed_origins),
      grammar_(std::make_unique<text_pool>(
          "courier-grammar", text_pool_threads(cfg.server.admission_threads),
          on_bulk_thread_start)),
      text_(std::make_unique<text_pool>("courier-text",
                                        text_pool_threads(cfg.server.admission_threads),
                                        std::move(on_text_thread_start))),
      bulk_(std::make_unique<text_pool>("courier-bulk",
                                        text_pool_threads(cfg.server.admission_threads),
                                        std::move(on_bulk_thread_start))) {
  http::server_options o;
  o.host = cfg.server.host;
  o.port = static_cast<std::uint16_t>(cfg.server.port);
  o.max_body_bytes = static_cast<std::size_t>(cfg.server.max_body_bytes);
  o.max_stream_buffer_bytes = static_cast<std::size_t>(cfg.server.max_stream_buffer_bytes);
  o.cors_allowed_origins = cfg.server.cors_allowed_origins;
  http_ = std::make_unique<http::server>(
      o, [this](http::request req, std::shared_ptr<http::response_writer> out) {
        handle(std::move(req), std::move(out));
      });
  http_->start();
}

admission_server::~admission_server() { stop(std::chrono::milliseconds(0)); }

std::uint16_t admission_server::port() const { return http_->port(); }

std::size_t admission_server::num_in_flight() const { return http_->num_in_flight(); }

void admission_server::stop(std::chrono::milliseconds grace) {
  if (http_) http_->stop(grace);
}

// Runs on the HTTP I/O thread: everything here is quick. Parsing, templating and tokenizing go
// to the text pool (which hands generation to a request actor), scraping to an actor.
void admission_server::handle(http::request req, std::shared_ptr<http::response_writer> out) {
  const std::int64_t arrival_ns = telemetry::now_ns();
  // Anthropic's clients read errors in its shape, under its path (the 401 and 404 included).
  const api_format shape = anthropic_path(req.target) ? api_format::anthropic : api_format::openai;
  try {
    const auto match = find_route(req.target);
    if (answered_without_key(req, match, out)) return;
    const auto tenant = tenant_of(ctx_->api_keys, req);
    if (!tenant) {
      throw api_error(401,
                      "a valid API key is required (Authorization: Bearer KEY, or x-api-key: KEY)",
                      "", "authentication_error", "invalid_api_key");
    }
    if (!match) {
      throw api_error(404, "no such endpoint: " + req.method + " " + req.target, "",
                      "not_found_error");
    }
    answer_route(*match, *tenant, req, out, arrival_ns);  // errors still answer through out
  } catch (const api_error& e) {
    send_api_error(*out, e, shape);
  } catch (const std::exception& e) {
    send_api_error(*out, api_error(500, std::string("internal error: ") + e.what(), "",
                                   "server_error"), shape);
  }
}

// What is answered before the key is checked: a browser's preflight (it carries no
// credentials), a method the route does not take, and the public routes (no key, as probes
// and scrapers expect). False: nothing was answered.
bool admission_server::answered_without_key(const http::request& req,
                                            const std::optional<route_match>& match,
                                            std::shared_ptr<http::response_writer>& out) {
  if (match && req.method == "OPTIONS") {
    // A browser's preflight carries no credentials: answered before auth.
    http::header_list headers = {{"Allow", allowed_methods(match->which)}};
    for (auto& h : cors_.preflight_headers(req, allowed_methods(match->which))) {
      headers.push_back(std::move(h));
    }
    out->send(204, "", "", std::move(headers));
    return true;
  }
  if (match && !takes_method(match->which, req.method)) {
    send_api_error(*out,
                   api_error(405, req.method + " is not allowed on " + req.target + " (use " +
                                      allowed_methods(match->which) + ")"),
                   {{"Allow", allowed_methods(match->which)}});
    return true;
  }
  if (match && is_public(match->which)) {  // no key, as probes and scrapers expect
    if (match->which == route::health) {
      send_json(out, 200, {{"status", "ok"}});
    } else if (match->which == route::web) {
      serve_web(*out, match->asset);
    } else {
      serve_metrics(std::move(out));
    }
    return true;
  }
  return false;
}

// A route the tenant's key may call.
void admission_server::answer_route(const route_match& match, const std::string& tenant,
                                    http::request& req,
                                    std::shared_ptr<http::response_writer>& out,
                                    std::int64_t arrival_ns) {
  switch (match.which) {
    case route::models:
    {
      json data = json::array();  // those the key may use
      if (may_use(*ctx_, tenant, ctx_->model_name)) {
        data.push_back(model_object(ctx_->model_name));
      }
      for (const std::string& a : ctx_->adapters()) {
        if (may_use(*ctx_, tenant, a)) data.push_back(model_object(a));
      }
      send_json(out, 200, {{"object", "list"}, {"data", data}});
      return;
    }
    case route::server_info:
      out->send(200, "application/json", ctx_->server_info);
      return;
    case route::model:
      if ((match.id != ctx_->model_name && !ctx_->has_adapter(match.id)) ||
          !may_use(*ctx_, tenant, match.id)) {
        throw api_error(404, "The model '" + match.id + "' does not exist", "model",
                        "invalid_request_error", "model_not_found");
      }
      send_json(out, 200, model_object(match.id));
      return;
    case route::tokenize:
    case route::detokenize:
    case route::count_tokens: {
      text_pool& pool = pool_for(req.body);
      pool.post([ctx = ctx_, body = std::move(req.body), out = std::move(out),
                 which = match.which == route::tokenize     ? token_route::tokenize
                         : match.which == route::detokenize ? token_route::detokenize
                                                            : token_route::count_tokens] {
        answer_token_route(*ctx, which, body, *out);
      });
      return;
    }
    case route::completions:
    case route::chat:
    case route::messages:
    case route::responses: {
      const route r = match.which;
      text_pool& pool = pool_for(req.body);
      pool.post([&sys = sys_, ctx = ctx_, body = std::move(req.body), out = std::move(out),
                 tenant = tenant, arrival_ns, grammar = grammar_.get(),
                 kind = r == route::completions ? endpoint::completions : endpoint::chat,
                 format = r == route::messages    ? api_format::anthropic
                          : r == route::responses ? api_format::responses
                                                  : api_format::openai]() mutable {
        spawn_request(sys, ctx, kind, body, std::move(out), std::move(tenant), arrival_ns,
                      format, grammar);
      });
      return;
    }
    case route::stored_response:
      serve_stored_response(match.id, tenant, req.method, std::move(out));
      return;
    case route::embeddings:
      pool_for(req.body).post([&sys = sys_, ctx = ctx_, body = std::move(req.body),
                               out = std::move(out), tenant = tenant, arrival_ns]() mutable {
        spawn_embeddings(sys, std::move(ctx), body, std::move(out), std::move(tenant),
                         arrival_ns);
      });
      return;
    case route::load_lora:
    case route::unload_lora:
      answer_lora_route(sys_, ctx_, match.which, tenant, req.body, std::move(out));
      return;
    case route::health:
    case route::metrics:
    case route::web:
      return;  // answered above
  }
}

// The base model, or one of its LoRA adapters (with the base as `parent`, as vLLM lists them).
nlohmann::json admission_server::model_object(const std::string& id) const {
  nlohmann::json o = {{"id", id},
                      {"object", "model"},
                      {"created", 0},
                      {"owned_by", "courier"},
                      {"root", id},
                      {"parent", nullptr},
                      {"max_model_len", ctx_->max_model_len}};
  if (id != ctx_->model_name) o["parent"] = ctx_->model_name;
  return o;
}

// The web page's files, with headers that keep a browser to this server: the policy allows
// scripts, styles and requests of this origin only (no inline code, no frames, no other host).
void admission_server::serve_web(http::response_writer& out, const std::string& path) {
  if (!ctx_->web_ui) {
    send_api_error(out, api_error(404, "the web page is off (server.web_ui)", "",
                                  "not_found_error"));
    return;
  }
  const web_asset* a = find_web_asset(path);
  if (!a) {
    send_api_error(out, api_error(404, "no such file of the web page: " + path, "",
                                  "not_found_error"));
    return;
  }
  out.send(200, std::string(a->content_type), std::string(a->body),
           {{"Content-Security-Policy",
             "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
             "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
            {"X-Content-Type-Options", "nosniff"},
            {"X-Frame-Options", "DENY"},
            {"Referrer-Policy", "no-referrer"},
            {"Cache-Control", "no-cache"}});
}

void admission_server::serve_stored_response(const std::string& id, const std::string& tenant,
                                             const std::string& method,
                                             std::shared_ptr<http::response_writer> out) {
  text_->post([store = ctx_->responses, id, tenant, erase = method == "DELETE",
               out = std::move(out)] {
    // OpenAI's answer for an id it does not know (here: not kept, expired, another tenant's).
    const api_error unknown(404, "Response with id '" + id + "' not found.", "",
                            "invalid_request_error");
    if (erase) {
      if (!store || !store->erase(tenant, id)) return send_api_error(*out, unknown);
      send_json(out, 200, {{"id", id}, {"object", "response"}, {"deleted", true}});
      return;
    }
    std::optional<std::string> text = store ? store->response_text(tenant, id) : std::nullopt;
    if (!text) return send_api_error(*out, unknown);
    out->send(200, "application/json", std::move(*text));
  });
}

void admission_server::serve_metrics(std::shared_ptr<http::response_writer> out) {
  if (!ctx_->telemetry) {
    send_api_error(*out,
                   api_error(404, "metrics are off (telemetry.metrics)", "", "not_found_error"));
    return;
  }
  // A one-shot actor asks the telemetry actor; the I/O thread never waits.
  sys_.spawn(scrape_fn, ctx_->telemetry, std::move(out),
             transport_metrics(ctx_->model_name, http_->num_overflow_closes()),
             ctx_->front_end ? caf::actor_cast<caf::actor>(ctx_->scheduler) : caf::actor{});
}

}  // namespace courier::admission
