// The shared lookup cache's scope names what was loaded, not what it is served as: two serves of
// different tokenizers (or weights) under one name never share a scope, and the same folder
// always gives the same one.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "actors/scheduler/scheduler_core.hpp"
#include "storage/fingerprint.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_lookup_scope {

using namespace courier;
namespace fs = std::filesystem;

namespace {

// What the runtime puts in engine_ready for `folder`, served as `name`.
msg::engine_ready ready_for(const std::string& folder, const std::string& name) {
  msg::engine_ready r;
  r.model_name = name;
  r.weights_fingerprint = storage::weights_fingerprint(folder);
  r.tokenizer_fingerprint = storage::tokenizer_fingerprint(folder);
  return r;
}

}  // namespace

TEST_CASE("lookup scope: one served name over another tokenizer or other weights is another "
          "scope; the same folder is the same scope",
          "[scheduler][speculative]") {
  const std::string qwen = test::model_dir("tiny-qwen3");
  const fs::path copy = fs::temp_directory_path() /
                        ("courier_lookup_scope_" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(qwen, copy, fs::copy_options::recursive);
  const msg::engine_ready a = ready_for(qwen, "chat");
  CHECK(actors::lookup_scope_of(a, "", "t") ==
        actors::lookup_scope_of(ready_for(copy.string(), "chat"), "", "t"));  // same bytes
  {  // the copy's tokenizer gains one added token: another tokenizer, the same weights
    std::ifstream in(copy / "tokenizer.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t at = text.find("\"added_tokens\": [");
    REQUIRE(at != std::string::npos);
    text.insert(at + 17, "{\"id\": 151999, \"content\": \"<x>\", \"special\": true}, ");
    std::ofstream(copy / "tokenizer.json") << text;
  }
  const msg::engine_ready b = ready_for(copy.string(), "chat");
  CHECK(a.weights_fingerprint == b.weights_fingerprint);
  CHECK(a.tokenizer_fingerprint != b.tokenizer_fingerprint);
  CHECK_FALSE(actors::lookup_scope_of(a, "", "t") == actors::lookup_scope_of(b, "", "t"));
  // Other weights under the same name: another scope too.
  const msg::engine_ready llama = ready_for(test::model_dir("tiny-llama3"), "chat");
  CHECK(llama.weights_fingerprint != a.weights_fingerprint);
  CHECK_FALSE(actors::lookup_scope_of(a, "", "t") == actors::lookup_scope_of(llama, "", "t"));
  // Adapter and tenant still tell scopes apart within one model.
  CHECK_FALSE(actors::lookup_scope_of(a, "sql", "t") == actors::lookup_scope_of(a, "", "t"));
  CHECK_FALSE(actors::lookup_scope_of(a, "", "u") == actors::lookup_scope_of(a, "", "t"));
  fs::remove_all(copy);
}

}  // namespace courier_test_actors_scheduler_lookup_scope
