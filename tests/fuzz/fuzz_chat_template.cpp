// Fuzz target: the chat template renderer (text/jinja) with fuzzed contexts on the five real
// templates of tests/data/cases/chat-cases.json (qwen3, which tiny-qwen3 bundles, llama3,
// llama3_1, gemma3, deepseek_v3). Each input is a JSON object, the variables of one render
// (messages, tools, add_generation_prompt, bos_token, ...), rendered by every template.
//
// Allowed: text that is valid UTF-8 within render_options' max_output_bytes, or a template_error.
// A finding: any other exception, a crash, a sanitizer report, a hang, or memory past
// libFuzzer's -rss_limit_mb. Inputs that are not a JSON object are not rendered.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"
#include "text/jinja/chat_template.hpp"
#include "text/tokenizer/utf8.hpp"

namespace {

using courier::fuzz::finding;
namespace jinja = courier::text::jinja;

// Owned for the whole process: (family, parsed template).
std::vector<std::pair<std::string, jinja::chat_template>>* templates = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  templates = new std::vector<std::pair<std::string, jinja::chat_template>>;
  const auto cases = nlohmann::ordered_json::parse(
      courier::fuzz::read_file(courier::fuzz::data_path("cases/chat-cases.json")));
  for (const auto& [family, source] : cases.at("templates").items()) {
    templates->emplace_back(family, jinja::chat_template::parse(source.get<std::string>()));
  }
  courier::fuzz::limit_stack();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto context = nlohmann::ordered_json::parse(data, data + size, nullptr,
                                                     /*allow_exceptions=*/false);
  if (!context.is_object()) return -1;  // not a context: keep it out of the corpus
  const jinja::render_options options;  // the server's
  for (const auto& [family, tmpl] : *templates) {
    std::string text;
    try {
      text = tmpl.render(context, options);
    } catch (const jinja::template_error&) {
      continue;
    } catch (...) {
      courier::fuzz::undocumented_exception(("render with " + family).c_str());
    }
    if (text.size() > options.max_output_bytes) finding(family + ": output past max_output_bytes");
    if (!courier::text::utf8::is_valid(text)) finding(family + ": output is not valid UTF-8");
  }
  return 0;
}
