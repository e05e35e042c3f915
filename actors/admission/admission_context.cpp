#include "actors/admission/admission_context.hpp"

#include <algorithm>
#include <cstdio>

#include "actors/admission/admission_server.hpp"

namespace courier::admission {

std::size_t longest_token_bytes(const text::tokenizer& tok) {
  std::size_t longest = 0;
  for (text::token_id id = 0; id < tok.id_bound(); ++id) {
    longest = std::max(longest, tok.token_bytes(id).size());
    if (tok.is_special(id)) {
      if (auto spelled = tok.id_to_token(id)) longest = std::max(longest, spelled->size());
    }
  }
  return longest;
}

void configure_context(admission_context& ctx, const config::server_config& cfg) {
  ctx.api_keys = cfg.server.api_keys;
  ctx.max_json_depth = cfg.server.max_json_depth;
  ctx.max_sequences_per_request = cfg.server.max_sequences_per_request;
  load_text_assets(cfg.model.path, ctx);
  if (ctx.tok) ctx.max_token_bytes = longest_token_bytes(*ctx.tok);
  if (!cfg.server.api_keys.empty() && cfg.scheduler.cache_isolation == "none") {
    std::fprintf(stderr,
                 "courier: warning: scheduler.cache_isolation is none with server.api_keys set: "
                 "tenants share prefix-cache blocks, and a response's cached_tokens can tell "
                 "one tenant what another sent\n");
  }
}

}  // namespace courier::admission
