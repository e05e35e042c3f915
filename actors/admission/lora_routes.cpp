#include "actors/admission/lora_routes.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "actors/admission/api_request.hpp"
#include "actors/admission/http_errors.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

namespace {

std::string field(const nlohmann::json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_string() || j[name].get<std::string>().empty()) {
    throw api_error(400, std::string("'") + name + "' is required (a non-empty string)", name);
  }
  return j[name].get<std::string>();
}

void change_fn(caf::event_based_actor* self, std::shared_ptr<admission_context> ctx,
               msg::lora_change change, std::shared_ptr<http::response_writer> out) {
  self->request(ctx->scheduler, caf::infinite, change)
      .then(
          [ctx, change, out](const msg::lora_ack& a) {
            if (!a.ok) {
              send_api_error(
                  *out, api_error(a.status, a.error, "lora_name",
                                  a.status == 404 ? "not_found_error" : "invalid_request_error"));
              return;
            }
            const bool added = change.op == msg::lora_change::load;
            std::vector<std::string> names = ctx->adapters();
            names.erase(std::remove(names.begin(), names.end(), change.name), names.end());
            if (added) names.push_back(change.name);
            ctx->set_adapters(std::move(names));
            out->send(200, "text/plain; charset=utf-8",
                      "Success: LoRA adapter '" + change.name + "' " +
                          (added ? "added" : "removed") + " successfully.");
          },
          [out](const caf::error& e) {
            send_api_error(*out,
                           api_error(500, "the scheduler did not answer: " + caf::to_string(e), "",
                                     "server_error"));
          });
}

}  // namespace

void answer_lora_route(caf::actor_system& sys, std::shared_ptr<admission_context> ctx, route r,
                       const std::string& tenant, const std::string& body,
                       std::shared_ptr<http::response_writer> out) {
  try {
    if (!ctx->lora_runtime_loading) {
      throw api_error(404, "loading LoRA adapters at run time is off (lora.runtime_loading)", "",
                      "not_found_error");
    }
    if (!ctx->api_keys.empty() && !ctx->admin_tenants.count(tenant)) {
      throw api_error(403,
                      "this API key may not load or unload adapters (an admin key may: a "
                      "server.api_keys entry with admin: true)",
                      "", "permission_error");
    }
    const nlohmann::json j = parse_json_body(body, ctx->max_json_depth);
    if (!j.is_object()) throw api_error(400, "expected a JSON object");
    msg::lora_change c;
    c.op = r == route::load_lora ? msg::lora_change::load : msg::lora_change::unload;
    c.name = field(j, "lora_name");
    if (c.op == msg::lora_change::load) c.path = field(j, "lora_path");
    sys.spawn(change_fn, std::move(ctx), std::move(c), std::move(out));
  } catch (const api_error& e) {
    send_api_error(*out, e);
  }
}

}  // namespace courier::admission
