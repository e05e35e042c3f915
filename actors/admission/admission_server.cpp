#include "actors/admission/admission_server.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/admission/api_request.hpp"
#include "actors/admission/api_response.hpp"
#include "actors/admission/request_actor.hpp"
#include "actors/telemetry/trace.hpp"

namespace courier::admission {

using nlohmann::json;

namespace {

void send_json(const std::shared_ptr<http::response_writer>& out, int status, const json& j) {
  out->send(status, "application/json", wire(j));
}

void send_error(const std::shared_ptr<http::response_writer>& out, const api_error& e) {
  send_json(out, e.status, e.to_json());
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

// The bearer key's tenant; nullopt when keys are configured and this one is not among them.
std::optional<std::string> tenant_of(const admission_context& ctx, const http::request& req) {
  if (ctx.api_keys.empty()) return std::string();
  auto it = req.headers.find("authorization");
  if (it == req.headers.end()) return std::nullopt;
  const std::string prefix = "Bearer ";
  if (it->second.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  auto key = ctx.api_keys.find(it->second.substr(prefix.size()));
  if (key == ctx.api_keys.end()) return std::nullopt;
  return key->second;
}

json tokenize_body(const admission_context& ctx, const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw api_error(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw api_error(400, "the body must be a JSON object");
  if (!ctx.tok) throw api_error(400, "this model has no tokenizer");
  std::vector<text::token_id> ids;
  if (j.contains("messages")) {
    // Rendered as a chat request would be (key order kept for the template).
    const auto oj = nlohmann::ordered_json::parse(body);
    nlohmann::ordered_json chat = {{"model", ctx.model_name}, {"messages", oj["messages"]},
                                   {"max_tokens", 1}};
    if (oj.contains("add_generation_prompt")) {
      chat["add_generation_prompt"] = oj["add_generation_prompt"];
    }
    ids = parse_api_request(endpoint::chat, chat.dump(), ctx).prompts.at(0);
  } else if (j.contains("prompt") && j["prompt"].is_string()) {
    const bool special = !j.contains("add_special_tokens") || j["add_special_tokens"] == true;
    ids = ctx.tok->encode(j["prompt"].get<std::string>(), special);
  } else {
    throw api_error(400, "'prompt': expected a string (or 'messages')", "prompt");
  }
  return {{"count", ids.size()}, {"max_model_len", ctx.max_model_len}, {"tokens", ids}};
}

json detokenize_body(const admission_context& ctx, const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw api_error(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!ctx.tok) throw api_error(400, "this model has no tokenizer");
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) {
    throw api_error(400, "'tokens': expected a list of token ids", "tokens");
  }
  std::vector<text::token_id> ids;
  for (const json& t : j["tokens"]) {
    if (!t.is_number_integer() || t.get<std::int64_t>() < 0 ||
        t.get<std::int64_t>() >= ctx.vocab_size) {
      throw api_error(400, "'tokens': token ids must be integers in the vocabulary", "tokens");
    }
    ids.push_back(t.get<text::token_id>());
  }
  return {{"prompt", ctx.tok->decode(ids)}};
}

// Arguments go through spawn, not a capture: CAF 0.17 dereferences a null argument tuple when a
// function actor is spawned without any (UBSan reports it).
void scrape_fn(caf::event_based_actor* self, actors::telemetry_actor tel,
               std::shared_ptr<http::response_writer> out) {
  self->request(tel, caf::infinite, msg::scrape_atom_v)
      .then(
          [out](const std::string& text) {
            if (text.empty()) {
              send_error(out, api_error(404, "metrics are off (telemetry.metrics)", "",
                                        "not_found_error"));
            } else {
              out->send(200, "text/plain; version=0.0.4; charset=utf-8", text);
            }
          },
          [out](const caf::error& e) {
            send_error(out, api_error(500, "metrics unavailable: " + caf::to_string(e), "",
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
  if (!source.empty()) {
    ctx.chat = std::make_shared<const text::jinja::chat_template>(
        text::jinja::chat_template::parse(source));
  }
}

admission_server::admission_server(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                                   const config::server_config& cfg)
    : sys_(sys), ctx_(std::move(ctx)) {
  http::server_options o;
  o.host = cfg.server.host;
  o.port = static_cast<std::uint16_t>(cfg.server.port);
  o.max_body_bytes = static_cast<std::size_t>(cfg.server.max_body_bytes);
  http_ = std::make_unique<http::server>(
      o, [this](http::request req, std::shared_ptr<http::response_writer> out) {
        handle(std::move(req), std::move(out));
      });
  http_->start();
}

admission_server::~admission_server() { stop(std::chrono::milliseconds(0)); }

std::uint16_t admission_server::port() const { return http_->port(); }

void admission_server::stop(std::chrono::milliseconds grace) {
  if (http_) http_->stop(grace);
}

void admission_server::handle(http::request req, std::shared_ptr<http::response_writer> out) {
  const std::int64_t arrival_ns = telemetry::now_ns();
  try {
    const std::string& path = req.target;
    if (path == "/health") {
      if (req.method != "GET") throw api_error(405, "use GET");
      send_json(out, 200, {{"status", "ok"}});
      return;
    }
    if (path == "/metrics") {  // unauthenticated, as scrapers expect (and as vLLM serves it)
      if (req.method != "GET") throw api_error(405, "use GET");
      serve_metrics(std::move(out));
      return;
    }
    const auto tenant = tenant_of(*ctx_, req);
    if (!tenant) {
      throw api_error(401, "a valid API key is required (Authorization: Bearer KEY)", "",
                      "authentication_error");
    }
    if (path == "/v1/models") {
      if (req.method != "GET") throw api_error(405, "use GET");
      json model = {{"id", ctx_->model_name}, {"object", "model"}, {"created", 0},
                    {"owned_by", "courier"}, {"max_model_len", ctx_->max_model_len}};
      send_json(out, 200, {{"object", "list"}, {"data", json::array({model})}});
      return;
    }
    if (path == "/tokenize" || path == "/detokenize") {
      if (req.method != "POST") throw api_error(405, "use POST");
      send_json(out, 200, path == "/tokenize" ? tokenize_body(*ctx_, req.body)
                                              : detokenize_body(*ctx_, req.body));
      return;
    }
    if (path == "/v1/completions" || path == "/v1/chat/completions") {
      if (req.method != "POST") throw api_error(405, "use POST");
      const endpoint kind = path == "/v1/completions" ? endpoint::completions : endpoint::chat;
      spawn_request(sys_, ctx_, kind, std::move(req.body), std::move(out), *tenant, arrival_ns);
      return;
    }
    throw api_error(404, "no such endpoint: " + req.method + " " + path, "", "not_found_error");
  } catch (const api_error& e) {
    send_error(out, e);
  } catch (const std::exception& e) {
    send_error(out, api_error(500, std::string("internal error: ") + e.what(), "",
                              "server_error"));
  }
}

void admission_server::serve_metrics(std::shared_ptr<http::response_writer> out) {
  if (!ctx_->telemetry) {
    send_error(out, api_error(404, "metrics are off (telemetry.metrics)", "", "not_found_error"));
    return;
  }
  // A one-shot actor asks the telemetry actor; the I/O thread never waits.
  sys_.spawn(scrape_fn, ctx_->telemetry, std::move(out));
}

}  // namespace courier::admission
