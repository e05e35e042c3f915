// Model and post-processor options, one at a time on the toy tokenizer.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/text/tokenizer/toy_tokenizer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_options {

using courier::test::toy_tokenizer;
using courier::test::toy_tokenizer_json;
using courier::text::tokenizer;
using nlohmann::json;
using ids = std::vector<std::uint32_t>;

TEST_CASE("tokenizer options: merges as \"a b\" strings and as pairs give the same ids", "[text]") {
  json j = toy_tokenizer_json();
  const tokenizer a = toy_tokenizer(j);
  json pairs = json::array();
  for (const auto& m : j["model"]["merges"]) {
    const std::string s = m.get<std::string>();
    const auto space = s.find(' ');
    pairs.push_back({s.substr(0, space), s.substr(space + 1)});
  }
  j["model"]["merges"] = pairs;
  const tokenizer b = toy_tokenizer(j);
  for (const char* text : {"hello world", "hell", "worldhello", " wor ld"}) {
    CHECK(a.encode(text) == b.encode(text));
  }
}

TEST_CASE("tokenizer options: ignore_merges takes a word that is in the vocabulary whole",
          "[text]") {
  json j = toy_tokenizer_json();
  j["model"]["vocab"]["hel"] = 265;  // in the vocabulary, but no merge produces it
  CHECK(toy_tokenizer(j).encode("hel") == ids{256, 'l'});  // he + l
  j["model"]["ignore_merges"] = true;
  CHECK(toy_tokenizer(j).encode("hel") == ids{265});
  CHECK(toy_tokenizer(j).encode("hello") == ids{259});
}

TEST_CASE("tokenizer options: unknown characters become unk, fused when fuse_unk", "[text]") {
  // A character-level model (no ByteLevel pre-tokenizer) with a small alphabet.
  json j = toy_tokenizer_json();
  j["pre_tokenizer"] = nullptr;
  j["model"]["vocab"] = {{"a", 0}, {"b", 1}, {"<unk>", 2}, {"ab", 3}};
  j["model"]["merges"] = json::array({"a b"});
  j["model"]["unk_token"] = "<unk>";
  j["added_tokens"] = json::array();
  CHECK(toy_tokenizer(j).encode("accb") == ids{0, 2, 2, 1});
  CHECK(toy_tokenizer(j).encode("abab") == ids{3, 3});
  j["model"]["fuse_unk"] = true;
  CHECK(toy_tokenizer(j).encode("accb") == ids{0, 2, 1});
  j["model"]["unk_token"] = nullptr;
  // No unk token: unknown characters are dropped (as HF does), so a and b meet and merge.
  CHECK(toy_tokenizer(j).encode("accb") == ids{3});
}

TEST_CASE("tokenizer options: byte_fallback spells an unknown character in <0xNN> tokens",
          "[text]") {
  json j = toy_tokenizer_json();
  j["pre_tokenizer"] = nullptr;
  j["model"]["vocab"] = {{"a", 0}, {"<unk>", 1}, {"<0xC3>", 2}, {"<0xA9>", 3}};
  j["model"]["merges"] = json::array();
  j["model"]["unk_token"] = "<unk>";
  j["model"]["byte_fallback"] = true;
  j["added_tokens"] = json::array();
  CHECK(toy_tokenizer(j).encode("a\xC3\xA9") == ids{0, 2, 3});  // é = C3 A9
  CHECK(toy_tokenizer(j).encode("\xC3\xA8") == ids{1});         // è: no <0xA8>, so unk
}

TEST_CASE("tokenizer options: TemplateProcessing adds BOS and EOS only with special tokens",
          "[text]") {
  json j = toy_tokenizer_json();
  j["added_tokens"].push_back(
      {{"id", 301}, {"content", "<|begin|>"}, {"special", true}, {"normalized", false}});
  const json templ = {
      {"type", "TemplateProcessing"},
      {"single", json::array({{{"SpecialToken", {{"id", "<|begin|>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                              {{"SpecialToken", {{"id", "<|end|>"}, {"type_id", 0}}}}})},
      {"pair", json::array()},
      {"special_tokens",
       {{"<|begin|>", {{"id", "<|begin|>"}, {"ids", {301}}, {"tokens", {"<|begin|>"}}}},
        {"<|end|>", {{"id", "<|end|>"}, {"ids", {300}}, {"tokens", {"<|end|>"}}}}}}};
  j["post_processor"] = templ;
  CHECK(toy_tokenizer(j).encode("hello") == ids{301, 259, 300});
  CHECK(toy_tokenizer(j).encode("hello", false) == ids{259});
  CHECK(toy_tokenizer(j).encode("") == ids{301, 300});
  // Llama 3.1 style: a Sequence of ByteLevel and TemplateProcessing.
  j["post_processor"] = {{"type", "Sequence"},
                         {"processors", json::array({{{"type", "ByteLevel"}}, templ})}};
  CHECK(toy_tokenizer(j).encode("hello") == ids{301, 259, 300});
  j["post_processor"] = {
      {"type", "RobertaProcessing"}, {"cls", {"<|begin|>", 301}}, {"sep", {"<|end|>", 300}}};
  CHECK(toy_tokenizer(j).encode("hello") == ids{301, 259, 300});
}

TEST_CASE("tokenizer options: lookups by token and by id, added tokens first", "[text]") {
  const tokenizer t = toy_tokenizer(toy_tokenizer_json());
  CHECK(t.token_to_id("\xC4\xA0world") == 264u);  // spelled as in the file
  CHECK(t.token_to_id("<|end|>") == 300u);
  CHECK(!t.token_to_id("nope"));
  CHECK(t.id_to_token(264) == std::string("\xC4\xA0world"));
  CHECK(t.id_to_token(300) == std::string("<|end|>"));
  CHECK(!t.id_to_token(299));
  CHECK(t.is_special(300));
  CHECK(!t.is_special(259));
}

TEST_CASE("tokenizer options: decode skips special tokens and unknown ids when asked", "[text]") {
  const tokenizer t = toy_tokenizer(toy_tokenizer_json());
  CHECK(t.decode({259, 300, 264}) == "hello<|end|> world");
  CHECK(t.decode({259, 300, 264}, true) == "hello world");
  CHECK(t.decode({259, 299, 100000, 264}) == "hello world");  // ids with no token: nothing
  CHECK(t.decode({0xE4, 0xBD}) == "\xEF\xBF\xBD");            // an unfinished character: U+FFFD
}

TEST_CASE("tokenizer options: the config's clean_up_tokenization_spaces applies to decode",
          "[text]") {
  const json j = toy_tokenizer_json();
  const auto spaced = toy_tokenizer(j).encode("hello , world .");
  CHECK(toy_tokenizer(j).decode(spaced) == "hello , world .");
  CHECK(toy_tokenizer(j, R"({"clean_up_tokenization_spaces": true})").decode(spaced) ==
        "hello, world.");
}

}  // namespace courier_test_text_tokenizer_tokenizer_options
