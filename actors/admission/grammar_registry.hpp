#pragma once
// Compiled grammars of structured-output requests, cached by what they were compiled from: a
// client sends the same schema with every request, and the engine's mask cache (per grammar,
// warm after the first requests) is worth keeping between them. Shared by the text pool's
// threads (it locks); a grammar is compiled outside the lock, so a slow schema never blocks
// another request's lookup.
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "grammar/compile_limits.hpp"
#include "grammar/token_vocabulary.hpp"
#include "messages/messages.hpp"

namespace courier::admission {

// What a grammar is compiled from. `source` is the schema's JSON text (in its own key order),
// the regular expression, the GBNF text, the choices as a JSON array of strings, or forced tool
// calls (tool_calls.hpp: the family, the functions and their parameter schemas, as JSON).
struct grammar_spec {
  enum class kind : std::uint8_t { json_schema, json_object, regex, gbnf, choice, tool_calls };
  kind k = kind::json_object;
  std::string source;
  bool strict = false;  // json_schema: additionalProperties defaults to false (OpenAI strict)
};

class grammar_registry {
 public:
  // Keeps the `capacity` grammars used last (and their mask caches, which hold one bitmask
  // over the vocabulary per grammar position met). Each compilation runs within `limits`
  // (server.grammar_compile_*: a grammar_error naming the limit past them).
  // The mask caches of the kept grammars hold `cache_bytes` together at most (0: no bound): past
  // it the least recently used grammars go (requests still running keep theirs), and one
  // grammar's alone holds at most a quarter of it.
  grammar_registry(std::shared_ptr<const grammar::token_vocabulary> vocab, std::size_t capacity,
                   const grammar::compile_limits& limits = {}, std::size_t cache_bytes = 0);

  // The grammar of `spec`, compiled now or found among those compiled in the same `scope`.
  // Under scheduler.cache_isolation: tenant the scope is the tenant, so that how fast a grammar
  // comes back (found, or compiled) never tells one tenant what another sent; otherwise empty.
  // Throws grammar::grammar_error (the source is not valid, or uses what is not supported).
  msg::output_grammar get(const grammar_spec& spec, const std::string& scope);

  std::size_t size() const;
  std::uint64_t compiled() const;  // compilations so far (misses)

 private:
  struct entry {
    std::string key;
    msg::output_grammar grammar;
  };
  std::shared_ptr<const grammar::token_vocabulary> vocab_;
  std::size_t capacity_;
  grammar::compile_limits limits_;
  std::size_t cache_bytes_;
  mutable std::mutex mutex_;
  std::list<entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<entry>::iterator> by_key_;
  std::uint64_t compiled_ = 0;

  void drop_over_budget();  // under mutex_
};

// The deepest nesting a spec's JSON source may have: a request's sources come from values
// already bounded by server.max_json_depth (at most this); a file given to `courier grammar` is
// bounded here.
constexpr int max_source_depth = 10000;

// The GBNF text of a spec (also what `courier grammar` prints), charging `budget`.
std::string gbnf_of(const grammar_spec& spec, grammar::compile_budget& budget);

}  // namespace courier::admission
