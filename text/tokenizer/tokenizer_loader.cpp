// tokenizer.json + tokenizer_config.json -> tokenizer::state. Every component type is checked
// here, so an unsupported one fails the load with its name instead of encoding differently.
#include <fmt/format.h>

#include <algorithm>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/json_reader.hpp"
#include "text/tokenizer/tokenizer_state.hpp"

namespace courier::text {

namespace {

using json = nlohmann::json;

std::string type_of(const json& node) {
  return node.is_object() && node.contains("type") && node["type"].is_string()
             ? node["type"].get<std::string>()
             : std::string();
}

void load_normalizer(const json_reader& r, const json& node, bool& nfc) {
  if (node.is_null()) return;
  const std::string type = type_of(node);
  if (type == "NFC") {
    nfc = true;
  } else if (type == "Sequence" && node.contains("normalizers") && node["normalizers"].is_array()) {
    for (const json& n : node["normalizers"]) load_normalizer(r, n, nfc);
  } else {
    r.unsupported("normalizer", node);
  }
}

split_behavior parse_behavior(const json_reader& r, const json& node) {
  const std::string b = node.value("behavior", std::string("Isolated"));
  if (b == "Removed") return split_behavior::removed;
  if (b == "Isolated") return split_behavior::isolated;
  if (b == "MergedWithPrevious") return split_behavior::merged_with_previous;
  if (b == "MergedWithNext") return split_behavior::merged_with_next;
  if (b == "Contiguous") return split_behavior::contiguous;
  r.fail(fmt::format("unsupported Split behavior '{}'", b));
}

void load_pre_tokenizer(const json_reader& r, const json& node, pre_tokenizer& pre) {
  if (node.is_null()) return;
  const std::string type = type_of(node);
  if (type == "Sequence" && node.contains("pretokenizers") && node["pretokenizers"].is_array()) {
    for (const json& p : node["pretokenizers"]) load_pre_tokenizer(r, p, pre);
    return;
  }
  if (pre.byte_level()) r.fail("a pre_tokenizer after ByteLevel is not supported");
  if (type == "Split") {
    const json& pattern = node.value("pattern", json());
    std::optional<std::string> regex_text, literal;
    if (pattern.is_object()) {
      regex_text = r.get_string(pattern, "Regex");
      literal = r.get_string(pattern, "String");
    }
    if (!regex_text && !literal)
      r.fail("Split pre_tokenizer needs a {\"Regex\"} or {\"String\"} pattern");
    try {
      pre.add_split({regex(regex_text ? *regex_text : *literal, !regex_text),
                     parse_behavior(r, node), r.get_bool(node, "invert", false)});
    } catch (const tokenizer_error& e) {
      r.fail(fmt::format("Split pattern {}: {}", pattern.dump(), e.what()));
    }
  } else if (type == "ByteLevel") {
    // Hugging Face's defaults for absent fields.
    pre.add_byte_level(
        {r.get_bool(node, "add_prefix_space", true), r.get_bool(node, "use_regex", true)});
  } else {
    r.unsupported("pre_tokenizer", node);
  }
}

std::optional<bpe_model> load_model(const json_reader& r, const json& node, bool byte_level) {
  if (!node.is_object()) r.fail("missing 'model'");
  const std::string type = type_of(node);
  if (!(type == "BPE" || (type.empty() && node.contains("merges")))) {
    r.unsupported("model", node);
  }
  if (node.contains("dropout") && !node["dropout"].is_null() &&
      !(node["dropout"].is_number() && node["dropout"].get<double>() == 0.0)) {
    r.fail("unsupported BPE option 'dropout' (only null or 0)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (auto v = r.get_string(node, key); v && !v->empty()) {
      r.fail(fmt::format("unsupported BPE option '{}' ('{}')", key, *v));
    }
  }
  if (!node.contains("vocab") || !node["vocab"].is_object()) r.fail("model has no 'vocab' object");
  std::vector<std::pair<std::string, std::uint32_t>> vocab;
  vocab.reserve(node["vocab"].size());
  for (const auto& [token, id] : node["vocab"].items()) {
    vocab.emplace_back(token, r.get_id(id, "vocab entry '" + token + "'"));
  }
  std::vector<std::pair<std::string, std::string>> merges;
  const json merges_node = node.value("merges", json::array());
  if (!merges_node.is_array()) r.fail("model 'merges' must be an array");
  merges.reserve(merges_node.size());
  for (const json& m : merges_node) {
    if (m.is_string()) {
      // "a b": split at the first space, as Hugging Face does.
      const std::string& s = m.get_ref<const std::string&>();
      const auto space = s.find(' ');
      if (space == std::string::npos) r.fail(fmt::format("merge '{}' is not 'a b'", s));
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      r.fail(fmt::format("merge {} is neither \"a b\" nor [\"a\", \"b\"]", m.dump()));
    }
  }
  bpe_model::options opts;
  opts.byte_level = byte_level;
  opts.ignore_merges = r.get_bool(node, "ignore_merges", false);
  opts.byte_fallback = r.get_bool(node, "byte_fallback", false);
  opts.fuse_unk = r.get_bool(node, "fuse_unk", false);
  opts.unk_token = r.get_string(node, "unk_token");
  try {
    return bpe_model(vocab, merges, opts);
  } catch (const tokenizer_error& e) {
    r.fail(e.what());
  }
}

std::vector<added_token> load_added_tokens(const json_reader& r, const json& node) {
  std::vector<added_token> out;
  if (node.is_null()) return out;
  if (!node.is_array()) r.fail("'added_tokens' must be an array");
  for (const json& t : node) {
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string() ||
        !t.contains("id")) {
      r.fail(fmt::format("added token {} needs 'id' and 'content'", t.dump()));
    }
    added_token a;
    a.content = t["content"].get<std::string>();
    a.id = r.get_id(t["id"], "added token '" + a.content + "'");
    a.special = r.get_bool(t, "special", false);
    a.lstrip = r.get_bool(t, "lstrip", false);
    a.rstrip = r.get_bool(t, "rstrip", false);
    a.single_word = r.get_bool(t, "single_word", false);
    a.normalized = r.get_bool(t, "normalized", !a.special);
    out.push_back(std::move(a));
  }
  return out;
}

// The ids a post_processor's special token name stands for.
std::vector<std::uint32_t> template_ids(const json_reader& r, const json& specials,
                                        const std::string& name) {
  if (!specials.is_object() || !specials.contains(name)) {
    r.fail(fmt::format("TemplateProcessing: special token '{}' is not in 'special_tokens'", name));
  }
  std::vector<std::uint32_t> ids;
  for (const json& id : specials[name].value("ids", json::array())) {
    ids.push_back(r.get_id(id, "TemplateProcessing special token '" + name + "'"));
  }
  return ids;
}

post_processor load_post_processor(const json_reader& r, const json& node) {
  post_processor p;
  if (node.is_null()) return p;
  const std::string type = type_of(node);
  if (type == "ByteLevel") return p;  // changes offsets only
  if (type == "Sequence" && node.contains("processors") && node["processors"].is_array()) {
    for (const json& inner : node["processors"]) p.wrap_in(load_post_processor(r, inner));
    return p;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const json& pair = node.value(key, json());
      if (!pair.is_array() || pair.size() != 2) r.fail(fmt::format("{}: bad '{}'", type, key));
      (key[0] == 'c' ? p.prefix : p.suffix).push_back(r.get_id(pair[1], type + " " + key));
    }
    return p;
  }
  if (type != "TemplateProcessing") r.unsupported("post_processor", node);
  const json& single = node.value("single", json());
  if (!single.is_array()) r.fail("TemplateProcessing needs a 'single' template");
  const json& specials = node.value("special_tokens", json());
  int num_sequences = 0;
  for (const json& item : single) {
    if (item.contains("SpecialToken")) {
      const std::string name = item["SpecialToken"].value("id", std::string());
      auto ids = template_ids(r, specials, name);
      auto& side = num_sequences == 0 ? p.prefix : p.suffix;
      side.insert(side.end(), ids.begin(), ids.end());
    } else if (item.contains("Sequence") && item["Sequence"].value("id", "") == std::string("A")) {
      ++num_sequences;
    } else {
      r.fail(fmt::format("TemplateProcessing: unsupported item {} in 'single'", item.dump()));
    }
  }
  if (num_sequences != 1) r.fail("TemplateProcessing: 'single' must hold sequence A once");
  return p;
}

void check_decoder(const json_reader& r, const json& node) {
  const std::string type = type_of(node);
  if (type == "ByteLevel") return;
  if (type == "Sequence" && node.contains("decoders") && node["decoders"].is_array() &&
      node["decoders"].size() == 1) {
    check_decoder(r, node["decoders"][0]);
    return;
  }
  if (node.is_null()) r.fail("no decoder (decode needs one; supported: ByteLevel)");
  r.unsupported("decoder", node);
}

// See tokenizer::max_text_bytes_per_id(). Added tokens matched in the raw text count at most
// their content; the model's ids count normalized bytes, hence the shrink factor on both.
std::size_t max_text_bytes_per_id(const tokenizer::state& s) {
  std::size_t per_id = s.model->max_bytes_per_id();
  if (per_id == 0 || s.pre.removes_text()) return 0;
  for (const added_token& t : s.added.tokens()) {
    if (t.lstrip || t.rstrip) return 0;
    per_id = std::max(per_id, t.content.size());
  }
  return per_id * s.norm.max_shrink();
}

}  // namespace

std::unique_ptr<const tokenizer::state> load_tokenizer_state(std::string_view tokenizer_json,
                                                             std::string_view config_json,
                                                             const std::string& origin) {
  const json_reader r(origin);
  const json j = r.parse(tokenizer_json);
  if (!j.is_object()) r.fail("expected a JSON object");
  auto s = std::make_unique<tokenizer::state>();
  s->config = parse_tokenizer_config(config_json);

  bool nfc = false;
  load_normalizer(r, j.value("normalizer", json()), nfc);
  if (nfc) s->norm = normalizer::nfc();
  load_pre_tokenizer(r, j.value("pre_tokenizer", json()), s->pre);
  s->model = load_model(r, j.value("model", json()), s->pre.byte_level());
  s->post = load_post_processor(r, j.value("post_processor", json()));
  const json decoder_node = j.value("decoder", json());
  check_decoder(r, decoder_node);
  s->added = added_vocabulary(load_added_tokens(r, j.value("added_tokens", json())), s->norm);

  // The decode table: the model's tokens back to bytes, then added tokens verbatim.
  const bpe_model& model = *s->model;
  token_id bound = model.id_bound();
  for (const added_token& t : s->added.tokens()) bound = std::max(bound, t.id + 1);
  std::vector<std::string> bytes(bound);
  std::vector<char> special(bound, 0);
  std::vector<char> present(bound, 0);
  for (token_id id = 0; id < model.id_bound(); ++id) {
    const std::string* text = model.id_to_token(id);
    if (text == nullptr) continue;
    present[id] = 1;
    auto raw = byte_level::to_bytes(*text);
    bytes[id] = raw ? std::move(*raw) : *text;
  }
  for (const added_token& t : s->added.tokens()) {
    present[t.id] = 1;
    bytes[t.id] = t.content;
    special[t.id] = t.special;
  }
  // transformers skips every token the config names as special, not just tokenizer.json's.
  std::vector<std::string> names = s->config.additional_special_tokens;
  for (const auto* n :
       {&s->config.bos_token, &s->config.eos_token, &s->config.unk_token, &s->config.pad_token}) {
    if (*n) names.push_back(**n);
  }
  auto id_of = [&](const std::string& name) -> std::optional<token_id> {
    if (auto id = s->added.find(name)) return id;
    return model.token_to_id(name);
  };
  for (const std::string& name : names) {
    if (auto id = id_of(name); id && *id < bound) special[*id] = 1;
  }
  s->dec = decoder(bytes, std::move(special));
  for (char p : present) s->vocab_size += p ? 1 : 0;
  s->id_bound = bound;
  s->max_text_bytes_per_id = max_text_bytes_per_id(*s);
  auto maybe_id = [&](const std::optional<std::string>& name) -> std::optional<token_id> {
    return name ? id_of(*name) : std::nullopt;
  };
  s->specials = {maybe_id(s->config.bos_token), maybe_id(s->config.eos_token),
                 maybe_id(s->config.unk_token), maybe_id(s->config.pad_token)};
  return s;
}

}  // namespace courier::text
