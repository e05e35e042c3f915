// Structured outputs through the scheduler and the engine on the sim backend (tiny Qwen3, its
// real 151k vocabulary): every output stays inside its grammar (JSON schemas, any JSON object,
// a regex, choices), ends only where the grammar is complete, and equals the model generating
// alone with the grammar's masks computed afresh per token — with overlap and the pipeline,
// without them, with prompt-lookup drafts, with chunked prefill and with preemption.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "actors/admission/grammar_registry.hpp"
#include "actors/admission/grammar_vocabulary.hpp"
#include "actors/admission/tool_calls.hpp"
#include "grammar/matcher.hpp"
#include "tests/grammar/json_schema_oracle.hpp"
#include "text/output_parsers/tool_call_parser.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_structured_output {

using namespace courier;

namespace {

const char* const model_name = "tiny-qwen3";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct fixture {
  std::shared_ptr<const text::tokenizer> tok;
  std::vector<msg::token_id> eos;
  std::unique_ptr<admission::grammar_registry> registry;
  std::vector<msg::submit> requests;
};

const char* const tools_json = R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string", "maxLength": 10}, "unit": {"enum": ["c", "f"]}},
   "required": ["city", "unit"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
   "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99}}, "required": ["a"],
   "additionalProperties": false}}}])";

constexpr msg::token_id tool_call_token = 151657;  // "<tool_call>" in Qwen3's vocabulary

// One request per grammar (the schemas of tests/data/schemas, json_object, a regex, choices),
// greedy and seeded sampling alternating; half the prompts hold JSON text to copy from, so
// prompt lookup finds drafts. The last two are tool_choice auto: free text with a grammar that
// takes over at "<tool_call>", which a logit bias makes the model write whenever it may.
const fixture& setup() {
  static const fixture f = [] {
    fixture x;
    x.tok = std::make_shared<const text::tokenizer>(
        text::tokenizer::load(test::model_dir(model_name) + "/tokenizer.json"));
    const auto generation =
        nlohmann::json::parse(read(test::model_dir(model_name) + "/generation_config.json"));
    for (const auto& id : generation.at("eos_token_id")) x.eos.push_back(id.get<msg::token_id>());
    REQUIRE(x.eos.size() == 2);
    x.registry = std::make_unique<admission::grammar_registry>(
        admission::grammar_vocabulary(*x.tok, x.eos), 64);
    using kind = admission::grammar_spec::kind;
    std::vector<admission::grammar_spec> specs;
    for (const char* name : {"person", "weather_tool", "shapes", "tuple", "tree"}) {
      specs.push_back({kind::json_schema, read(test::data_dir() + "/schemas/" + name + ".json")});
    }
    specs.push_back({kind::json_object, ""});
    specs.push_back({kind::regex, "[a-z]{2,6}-[0-9]{1,3}( ok| no)?"});
    specs.push_back({kind::choice, R"(["red", "green", "blue sky"])"});
    std::mt19937 rng(5);
    const auto copy_from = x.tok->encode(
        R"(Example: {"name": "Ada", "age": 36, "tags": ["a", "b"], "ok": true, "name": "Bo"})",
        false);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      msg::submit s;
      s.id = i + 1;
      if (i % 2 == 0) {
        s.prompt = copy_from;
      } else {
        for (int t = 0; t < 5 + static_cast<int>(rng() % 30); ++t) s.prompt.push_back(rng() % 50000);
      }
      s.max_tokens = 32;
      s.sampling.has_seed = true;
      s.sampling.seed = rng();
      s.sampling.temperature = i % 4 >= 2 ? 0.9f : 0.0f;
      s.sampling.grammar = x.registry->get(specs[i], "");
      x.requests.push_back(std::move(s));
    }
    const auto tools = admission::parse_tool_request({{"tools", nlohmann::ordered_json::parse(tools_json)}});
    for (int k = 0; k < 2; ++k) {
      msg::submit s = x.requests[static_cast<std::size_t>(k)];
      s.id = x.requests.size() + 1;
      s.max_tokens = 48;
      s.sampling.grammar = x.registry->get(
          admission::tool_call_spec(tools, text::parsers::tool_family::hermes, true), "");
      s.sampling.grammar.trigger = "<tool_call>";
      s.sampling.logit_bias_tokens = {tool_call_token};
      s.sampling.logit_bias_values = {100.0f};
      x.requests.push_back(std::move(s));
    }
    return x;
  }();
  return f;
}

// tool_choice auto: every call the Hermes parser reads is to a tool, its arguments valid.
void check_calls(const msg::submit& s, const test::request_outcome& o) {
  std::string text;
  for (const msg::token_id t : o.tokens) {
    if (t < s.sampling.grammar.masks->vocabulary().id_bound()) {
      text += s.sampling.grammar.masks->vocabulary().bytes(t);
    }
  }
  INFO(text);
  const auto out = text::parsers::parse_tool_calls(text::parsers::tool_family::hermes, text);
  CHECK(out.calls.size() >= 1);  // the bias writes "<tool_call>" whenever free
  const auto tools = nlohmann::ordered_json::parse(tools_json);
  for (std::size_t i = 0; i < out.calls.size(); ++i) {
    if (out.truncated_call && i + 1 == out.calls.size()) break;  // cut off by max_tokens
    const auto& schema = out.calls[i].name == "add" ? tools[1]["function"]["parameters"]
                                                    : tools[0]["function"]["parameters"];
    CHECK((out.calls[i].name == "add" || out.calls[i].name == "get_weather"));
    CHECK(grammar::testing::conforms(nlohmann::ordered_json::parse(out.calls[i].arguments), schema,
                                     schema));
  }
}

// Every token of the output inside the grammar; EOS only where it is complete and only last.
void check_inside_grammar(const msg::submit& s, const test::request_outcome& o) {
  if (!s.sampling.grammar.trigger.empty()) return check_calls(s, o);
  const auto& masks = *s.sampling.grammar.masks;
  grammar::matcher m(masks.grammar_ptr());
  const auto& eos = masks.vocabulary().eos_ids();
  std::string text;
  for (std::size_t i = 0; i < o.tokens.size(); ++i) {
    const msg::token_id t = o.tokens[i];
    if (std::find(eos.begin(), eos.end(), t) != eos.end()) {
      CHECK(m.can_end());
      CHECK(i + 1 == o.tokens.size());
      continue;
    }
    const std::string& bytes = masks.vocabulary().bytes(t);
    INFO("after " << text);
    REQUIRE(m.accept(bytes));
    text += bytes;
  }
  if (o.last.finish == msg::finish_reason::stop) CHECK(m.can_end());
}

std::map<msg::request_id, std::vector<msg::token_id>> run(const config::server_config& cfg,
                                                          msg::scheduler_stats& st) {
  test::harness h(cfg);
  for (const auto& s : setup().requests) h.submit(s);
  auto& got = h.wait_all();
  std::map<msg::request_id, std::vector<msg::token_id>> out;
  for (const auto& s : setup().requests) {
    INFO("request " << s.id << " (" << s.sampling.grammar.key << ")");
    const test::request_outcome& o = got.at(s.id);
    INFO(o.last.message << " after " << setup().tok->decode(o.tokens, false));
    REQUIRE(o.last.finish != msg::finish_reason::error);
    CHECK((o.last.finish == msg::finish_reason::stop ||
           o.last.finish == msg::finish_reason::length));
    check_inside_grammar(s, o);
    out[s.id] = o.tokens;
  }
  st = h.stats();
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  return out;
}

const std::map<msg::request_id, test::reference_output>& references() {
  static const auto want = test::references_for(model_name, setup().requests);
  return want;
}

void check_against_references(const std::map<msg::request_id, std::vector<msg::token_id>>& got) {
  int finished = 0;
  for (const auto& s : setup().requests) {
    INFO("request " << s.id << " (" << s.sampling.grammar.key << "), temperature "
                    << s.sampling.temperature);
    CHECK(test::mismatch(got.at(s.id), references().at(s.id)) == "");
    finished += got.at(s.id).size() < static_cast<std::size_t>(s.max_tokens) ? 1 : 0;
  }
  CHECK(finished >= 2);  // the choices and the regex end by EOS where the grammar is complete
}

}  // namespace

TEST_CASE("structured outputs: every output stays inside its grammar and equals the model alone",
          "[integration][grammar]") {
  auto cfg = test::sim_config(model_name);
  REQUIRE(cfg.scheduler.overlap);
  msg::scheduler_stats st;
  check_against_references(run(cfg, st));
}

TEST_CASE("structured outputs: the same without overlap, with drafts, chunks and preemption",
          "[integration][grammar]") {
  msg::scheduler_stats st;
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.overlap = false;
  cfg.engine.pipeline = false;
  check_against_references(run(cfg, st));

  cfg = test::sim_config(model_name);
  cfg.speculative.prompt_lookup.enabled = true;
  const auto with_drafts = run(cfg, st);
  check_against_references(with_drafts);
  CHECK(st.spec_drafts > 0);
  CHECK(st.spec_accepted_own > 0);

  cfg = test::sim_config(model_name);
  cfg.scheduler.max_batched_tokens = 7;
  cfg.scheduler.num_kv_blocks = 12;  // a few sequences at a time: preemptions
  check_against_references(run(cfg, st));
  CHECK(st.num_preemptions > 0);
}

}  // namespace courier_test_integration_structured_output
