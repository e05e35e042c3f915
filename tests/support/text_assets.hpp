#pragma once
// A model folder's tokenizer and chat template, loaded once per test process and shared
// read-only by the admission contexts of every test that needs them: loading tiny-qwen3's
// tokenizer.json takes about a second, five under the sanitizers, and some thirty tests (each
// server fixture among them) need it. A folder is loaded again when its files change.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/admission_server.hpp"

namespace courier::test {

inline void use_shared_text_assets(admission::admission_context& ctx, const std::string& dir) {
  struct assets {
    std::string stamp;  // what the folder's files were when loaded
    std::shared_ptr<const text::tokenizer> tok;
    std::shared_ptr<const text::jinja::chat_template> chat;
    std::string bos_token, eos_token, chat_template_source;
  };
  static std::mutex mutex;
  static std::map<std::string, assets> loaded;

  namespace fs = std::filesystem;
  std::string stamp;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja"}) {
    std::error_code ec;
    const fs::path p = fs::path(dir) / f;
    const auto t = fs::last_write_time(p, ec);
    stamp += ec ? std::string("-") : std::to_string(t.time_since_epoch().count());
    stamp += ',';
  }
  std::lock_guard<std::mutex> lock(mutex);
  assets& a = loaded[dir];
  if (!a.tok || a.stamp != stamp) {
    admission::admission_context fresh;
    admission::load_text_assets(dir, fresh);
    a = {stamp, fresh.tok, fresh.chat, fresh.bos_token, fresh.eos_token,
         fresh.chat_template_source};
  }
  ctx.tok = a.tok;
  ctx.chat = a.chat;
  ctx.bos_token = a.bos_token;
  ctx.eos_token = a.eos_token;
  ctx.chat_template_source = a.chat_template_source;
}

}  // namespace courier::test
