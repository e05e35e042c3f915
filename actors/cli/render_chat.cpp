// courier render-chat: render a chat template against a JSON context, exactly as the server
// will, and print the prompt text. For checking a model's template before serving it.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "actors/cli/args.hpp"
#include "text/jinja/chat_template.hpp"
#include "text/jinja/template_source.hpp"

namespace courier::cli {

namespace {

namespace jinja = courier::text::jinja;
using nlohmann::ordered_json;

constexpr const char* render_chat_help =
    "usage: courier render-chat --template FILE --context FILE [options]\n"
    "  --template FILE       a Jinja chat template, or a tokenizer_config.json holding one\n"
    "  --template-name NAME  which named template of a tokenizer_config.json (default: default)\n"
    "  --context FILE        a JSON object: messages, add_generation_prompt, bos_token,\n"
    "                        eos_token, tools and any other variables ('-': standard input)\n"
    "  --max-steps N         the render's work bound (default 10000000)\n"
    "Prints the rendered text exactly, without adding a newline. With a tokenizer_config.json,\n"
    "its bos_token and eos_token fill in those the context does not set.\n";

// A failure of the inputs rather than of the command line: exit status 1.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string read_file(const std::string& path) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path + ": cannot open the file");
  ss << in.rdbuf();
  if (in.bad()) throw input_error(path + ": cannot read the file");
  return ss.str();
}

}  // namespace

int run_render_chat(int argc, char** argv) {
  std::string template_path;
  try {
    args a(argc, argv, 2, {"template", "template-name", "context", "max-steps"}, {"help"});
    if (a.has("help")) {
      std::fputs(render_chat_help, stdout);
      return 0;
    }
    template_path = a.get_or("template", "");
    const std::string context_path = a.get_or("context", "");
    if (template_path.empty()) throw usage_error("--template is required");
    if (context_path.empty()) throw usage_error("--context is required");
    if (template_path == "-") throw usage_error("--template must name a file");
    jinja::render_options options;
    if (const auto steps = a.get_int("max-steps")) {
      if (*steps < 1) throw usage_error("--max-steps must be at least 1");
      options.max_steps = static_cast<std::uint64_t>(*steps);
    }

    const std::string template_text = read_file(template_path);
    ordered_json context;
    try {
      context = ordered_json::parse(read_file(context_path));
    } catch (const nlohmann::json::parse_error& e) {
      throw input_error(context_path + ": not valid JSON (" + e.what() + ")");
    }
    if (!context.is_object()) throw input_error(context_path + ": expected a JSON object");

    // A tokenizer_config.json is a JSON object; a Jinja template never parses as one.
    std::string source = template_text;
    const ordered_json config = ordered_json::parse(template_text, nullptr, false);
    if (config.is_object()) {
      source = jinja::chat_template_from_config(config, a.get_or("template-name", "default"));
      for (const char* key : {"bos_token", "eos_token"}) {
        if (context.contains(key)) continue;
        if (auto token = jinja::special_token_from_config(config, key)) context[key] = *token;
      }
    } else if (a.get("template-name")) {
      throw usage_error("--template-name applies only to a tokenizer_config.json");
    }

    const std::string out = jinja::chat_template::parse(source).render(context, options);
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
      throw input_error("cannot write the output");
    }
    return 0;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "courier render-chat: %s (see --help)\n", e.what());
    return 2;
  } catch (const jinja::template_error& e) {
    std::fprintf(stderr, "courier render-chat: %s: %s\n", template_path.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "courier render-chat: %s\n", e.what());
    return 1;
  }
}

}  // namespace courier::cli
