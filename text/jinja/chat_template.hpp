#pragma once
// A parsed chat template: the Jinja program a model's tokenizer_config.json carries, which
// turns a conversation (messages, tools, add_generation_prompt, bos_token, eos_token, and
// any other keys) into the prompt text the model was trained on. See README.md for the subset
// of Jinja supported and how output matches @huggingface/jinja byte for byte.
//
// Thread safety: parse once, then render from any number of threads at once; a chat_template
// is immutable and cheap to copy (copies share the parsed program).
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "text/jinja/render_options.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

struct program;

class chat_template {
 public:
  // Throws template_error, naming the line, on any syntax error.
  static chat_template parse(const std::string& source);

  // Renders with `context` as the variables; it must be a JSON object. Throws template_error
  // (with the template line) for an unknown filter, test or function, a type error, a call to
  // raise_exception (its message), or work past `options`' bounds.
  std::string render(const nlohmann::ordered_json& context,
                     const render_options& options = {}) const;
  // The same for a nlohmann::json, whose objects sort their keys: `tojson` then writes keys
  // sorted, where @huggingface/jinja keeps the request's order. Prefer ordered_json.
  std::string render(const nlohmann::json& context, const render_options& options = {}) const;

 private:
  explicit chat_template(std::shared_ptr<const program> prog) : program_(std::move(prog)) {}

  std::shared_ptr<const program> program_;  // never null
};

}  // namespace courier::text::jinja
