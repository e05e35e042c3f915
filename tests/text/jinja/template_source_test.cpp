// Taking the chat template and special tokens out of a tokenizer_config.json.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "tests/text/jinja/render_helper.hpp"
#include "text/jinja/template_source.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_template_source {

namespace jinja = courier::text::jinja;
using nlohmann::ordered_json;

TEST_CASE("template source: a string chat_template is the default one", "[text]") {
  const auto config = ordered_json::parse(R"({"chat_template": "{{ 'x' }}", "bos_token": "<s>"})");
  CHECK(jinja::chat_template_from_config(config) == "{{ 'x' }}");
  CHECK_THROWS_AS(jinja::chat_template_from_config(config, "tool_use"), jinja::template_error);
}

TEST_CASE("template source: a list of named templates is searched by name", "[text]") {
  const auto config = ordered_json::parse(R"({"chat_template": [
      {"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]})");
  CHECK(jinja::chat_template_from_config(config) == "D");
  CHECK(jinja::chat_template_from_config(config, "tool_use") == "T");
  try {
    jinja::chat_template_from_config(config, "rag");
    FAIL("expected a template_error");
  } catch (const jinja::template_error& e) {
    CHECK(std::string(e.what()).find("default, tool_use") != std::string::npos);
  }
}

TEST_CASE("template source: a config without a template is an error", "[text]") {
  CHECK_THROWS_AS(jinja::chat_template_from_config(ordered_json::parse("{}")),
                  jinja::template_error);
  CHECK_THROWS_AS(jinja::chat_template_from_config(ordered_json::parse(R"({"chat_template": 3})")),
                  jinja::template_error);
}

TEST_CASE("template source: special tokens are strings or AddedToken objects", "[text]") {
  const auto config = ordered_json::parse(
      R"({"bos_token": "<s>", "eos_token": {"content": "</s>", "lstrip": false}, "pad_token": null})");
  CHECK(jinja::special_token_from_config(config, "bos_token") == std::optional<std::string>("<s>"));
  CHECK(jinja::special_token_from_config(config, "eos_token") ==
        std::optional<std::string>("</s>"));
  CHECK_FALSE(jinja::special_token_from_config(config, "pad_token").has_value());
  CHECK_FALSE(jinja::special_token_from_config(config, "unk_token").has_value());
}

TEST_CASE("template source: the bundled tiny-qwen3 config's template parses and renders",
          "[text]") {
  std::ifstream in(std::string(COURIER_TEST_DATA) + "/models/tiny-qwen3/tokenizer_config.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const auto config = ordered_json::parse(ss.str());
  const auto t = jinja::chat_template::parse(jinja::chat_template_from_config(config));
  const auto context = ordered_json::parse(
      R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true})");
  CHECK(t.render(context) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace courier_test_text_jinja_template_source
