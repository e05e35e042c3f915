// Every case of tests/data/cases/chat-cases.json (rendered by @huggingface/jinja) must render
// byte for byte, or fail where the case expects an error.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "text/jinja/chat_template.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_chat_cases {

namespace jinja = courier::text::jinja;

namespace {

nlohmann::ordered_json load_cases() {
  std::ifstream in(std::string(COURIER_TEST_DATA) + "/cases/chat-cases.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

}  // namespace

TEST_CASE("chat cases: every family's template renders every case as @huggingface/jinja does",
          "[text]") {
  const nlohmann::ordered_json data = load_cases();
  std::map<std::string, jinja::chat_template> templates;
  for (const auto& [family, source] : data["templates"].items()) {
    templates.emplace(family, jinja::chat_template::parse(source.get<std::string>()));
  }
  REQUIRE(templates.size() == 5);
  const auto& cases = data["cases"];
  REQUIRE(cases.size() == 30);
  std::size_t rendered = 0, failed_as_expected = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const std::string family = c["family"].get<std::string>();
    INFO("case " << i << " (" << family << "): " << c["messages"].dump());
    nlohmann::ordered_json context = {{"messages", c["messages"]},
                                      {"add_generation_prompt", c["add_generation_prompt"]},
                                      {"bos_token", c["bos_token"]},
                                      {"eos_token", c["eos_token"]}};
    const jinja::chat_template& t = templates.at(family);
    if (c.contains("error") && !c["error"].is_null()) {
      CHECK_THROWS_AS(t.render(context), jinja::template_error);
      ++failed_as_expected;
    } else {
      CHECK(t.render(context) == c["rendered"].get<std::string>());
      ++rendered;
    }
  }
  CHECK(rendered + failed_as_expected == 30);
}

TEST_CASE("chat cases: gemma3 refuses roles that do not alternate, with its own message",
          "[text]") {
  const nlohmann::ordered_json data = load_cases();
  const auto t = jinja::chat_template::parse(data["templates"]["gemma3"].get<std::string>());
  const nlohmann::ordered_json context = {
      {"messages", {{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}}}},
      {"add_generation_prompt", true},
      {"bos_token", "<bos>"},
      {"eos_token", "<eos>"}};
  try {
    t.render(context);
    FAIL("expected a template_error");
  } catch (const jinja::template_error& e) {
    CHECK(e.message() == "Conversation roles must alternate user/assistant/user/assistant/...");
    CHECK(e.line() == 19);  // the raise_exception call inside the loop
  }
}

TEST_CASE("chat cases: qwen3 renders tools as JSON in the request's key order", "[text]") {
  const nlohmann::ordered_json data = load_cases();
  const auto t = jinja::chat_template::parse(data["templates"]["qwen3"].get<std::string>());
  const auto context = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "user", "content": "Weather?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "add_generation_prompt": true, "bos_token": "", "eos_token": "<|im_end|>"})");
  const std::string expected =
      "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user "
      "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
      "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
      "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}}\n</tools>\n\n"
      "For each function call, return a json object with function name and arguments within "
      "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
      "<args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n"
      "<|im_start|>assistant\n";
  CHECK(t.render(context) == expected);
}

TEST_CASE("chat cases: one parsed template renders from several threads at once", "[text]") {
  const nlohmann::ordered_json data = load_cases();
  const auto t = jinja::chat_template::parse(data["templates"]["qwen3"].get<std::string>());
  const auto& c = data["cases"][5];
  REQUIRE(c["family"] == "qwen3");
  const nlohmann::ordered_json context = {{"messages", c["messages"]},
                                          {"add_generation_prompt", c["add_generation_prompt"]}};
  const std::string expected = c["rendered"].get<std::string>();
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 200; ++n) mismatches[i] += t.render(context) != expected;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

}  // namespace courier_test_text_jinja_chat_cases
