#include "actors/admission/grammar_registry.hpp"

#include "actors/admission/tool_calls.hpp"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/json_text.hpp"
#include "grammar/expr.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/regex_parser.hpp"
#include "grammar/token_mask.hpp"

namespace courier::admission {

namespace {

const char* kind_name(grammar_spec::kind k) {
  switch (k) {
    case grammar_spec::kind::json_schema: return "json_schema";
    case grammar_spec::kind::json_object: return "json_object";
    case grammar_spec::kind::regex: return "regex";
    case grammar_spec::kind::gbnf: return "gbnf";
    case grammar_spec::kind::choice: return "choice";
    case grammar_spec::kind::tool_calls: return "tool_calls";
  }
  return "grammar";
}

std::string cache_key(const grammar_spec& spec) {
  return fmt::format("{}{}:{}", kind_name(spec.k), spec.strict ? "/strict" : "", spec.source);
}

}  // namespace

std::string gbnf_of(const grammar_spec& spec, grammar::compile_budget& budget) {
  switch (spec.k) {
    case grammar_spec::kind::json_schema: {
      auto schema = base::parse_json_text<nlohmann::ordered_json>(spec.source, max_source_depth);
      if (!schema) {
        throw grammar::grammar_error(
            schema.error == base::json_text_error::too_deep
                ? fmt::format("the schema nests more than {} levels deep", max_source_depth)
                : "the schema is not valid JSON: " + schema.message);
      }
      grammar::json_schema_options opts;
      opts.default_additional_properties = !spec.strict;
      return grammar::json_schema_to_gbnf(schema.value, opts, budget);
    }
    case grammar_spec::kind::json_object: return grammar::json_object_gbnf();
    case grammar_spec::kind::regex:
      return "root ::= " + grammar::to_gbnf(grammar::parse_regex(spec.source, budget).e) + "\n";
    case grammar_spec::kind::gbnf: return spec.source;
    case grammar_spec::kind::choice: {
      const auto list = base::try_parse_json_text<nlohmann::json>(spec.source, max_source_depth)
                            .value_or(nlohmann::json());
      if (!list.is_array() || list.empty()) {
        throw grammar::grammar_error("the choices must be a non-empty list of strings");
      }
      std::vector<grammar::expr> options;
      for (const auto& c : list) {
        if (!c.is_string()) throw grammar::grammar_error("the choices must all be strings");
        options.push_back(grammar::expr::make_literal(c.get<std::string>()));
      }
      return "root ::= " + grammar::to_gbnf(grammar::expr::make_alternation(std::move(options))) +
             "\n";
    }
    case grammar_spec::kind::tool_calls: return tool_call_gbnf(spec.source, budget);
  }
  throw grammar::grammar_error("unknown grammar kind");
}

grammar_registry::grammar_registry(std::shared_ptr<const grammar::token_vocabulary> vocab,
                                   std::size_t capacity, const grammar::compile_limits& limits,
                                   std::size_t cache_bytes)
    : vocab_(std::move(vocab)),
      capacity_(capacity < 1 ? 1 : capacity),
      limits_(limits),
      cache_bytes_(cache_bytes) {}

void grammar_registry::drop_over_budget() {
  if (cache_bytes_ == 0) return;
  std::size_t total = 0;
  for (const entry& e : lru_) total += e.grammar.masks->bytes();
  while (total > cache_bytes_ && lru_.size() > 1) {  // never the one just used (the front)
    total -= lru_.back().grammar.masks->bytes();
    by_key_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

msg::output_grammar grammar_registry::get(const grammar_spec& spec, const std::string& scope) {
  const std::string key = fmt::format("{}\x1f{}", scope, cache_key(spec));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      drop_over_budget();
      return it->second->grammar;
    }
  }
  msg::output_grammar g;
  grammar::compile_budget budget(limits_);  // one for the whole compilation
  auto text = std::make_shared<const std::string>(gbnf_of(spec, budget));
  g.masks = std::make_shared<grammar::mask_cache>(grammar::compile_gbnf(*text, budget), vocab_,
                                                  cache_bytes_ / 4);
  g.gbnf = std::move(text);
  g.key = fmt::format("{}:{:016x}", kind_name(spec.k), std::hash<std::string>{}(key));
  std::lock_guard<std::mutex> lock(mutex_);
  ++compiled_;
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {  // compiled meanwhile by another thread: keep the first
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->grammar;
  }
  lru_.push_front({key, g});
  by_key_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    by_key_.erase(lru_.back().key);
    lru_.pop_back();
  }
  drop_over_budget();
  return g;
}

std::size_t grammar_registry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

std::uint64_t grammar_registry::compiled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

}  // namespace courier::admission
