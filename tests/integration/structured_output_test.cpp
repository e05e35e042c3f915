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
#include "grammar/matcher.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

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

// One request per grammar (the schemas of tests/data/schemas, json_object, a regex, choices),
// greedy and seeded sampling alternating; half the prompts hold JSON text to copy from, so
// prompt lookup finds drafts.
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
    for (const char* name : {"person", "weather_tool", "shapes", "tuple", "strict_openai",
                             "order", "tree"}) {
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
      s.max_tokens = 40;
      s.sampling.has_seed = true;
      s.sampling.seed = rng();
      s.sampling.temperature = i % 4 >= 2 ? 0.9f : 0.0f;
      s.sampling.grammar = x.registry->get(specs[i]);
      x.requests.push_back(std::move(s));
    }
    return x;
  }();
  return f;
}

// Every token of the output inside the grammar; EOS only where it is complete and only last.
void check_inside_grammar(const msg::submit& s, const test::request_outcome& o) {
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
