#include "tools/bench/token_sampler.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace courier::bench_tool {

std::shared_ptr<const text::tokenizer> load_tokenizer(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string file =
      std::filesystem::is_directory(p) ? (p / "tokenizer.json").string() : path;
  return std::make_shared<const text::tokenizer>(text::tokenizer::load(file));
}

namespace {

// config.json's vocab_size (or text_config.vocab_size, as multimodal configs nest it).
std::optional<std::int64_t> config_vocab_size(const std::filesystem::path& folder) {
  std::ifstream in(folder / "config.json");
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  for (const auto* c : {&j, j.contains("text_config") ? &j["text_config"] : nullptr}) {
    if (c && c->is_object() && c->contains("vocab_size") &&
        (*c)["vocab_size"].is_number_integer()) {
      return (*c)["vocab_size"].get<std::int64_t>();
    }
  }
  return std::nullopt;
}

}  // namespace

token_sampler sampler_for(const std::string& tokenizer_path, std::optional<std::int64_t> vocab_size,
                          bool needs_text) {
  namespace fs = std::filesystem;
  if (tokenizer_path.empty()) {
    if (needs_text) throw std::invalid_argument("text prompts need a tokenizer");
    if (!vocab_size) throw std::invalid_argument("random ids need a tokenizer or a vocab size");
    return token_sampler::uniform(*vocab_size);
  }
  const fs::path p(tokenizer_path);
  if (!fs::is_directory(p) || fs::exists(p / "tokenizer.json")) {
    return token_sampler::from_tokenizer(load_tokenizer(tokenizer_path));
  }
  if (needs_text) {
    throw std::invalid_argument(tokenizer_path + " has no tokenizer.json: text prompts need one");
  }
  if (!vocab_size) vocab_size = config_vocab_size(p);
  if (!vocab_size) {
    throw std::invalid_argument(tokenizer_path +
                                " has neither tokenizer.json nor a vocab_size in config.json");
  }
  return token_sampler::uniform(*vocab_size);
}

token_sampler token_sampler::uniform(std::int64_t vocab_size) {
  if (vocab_size <= 0 || vocab_size > std::int64_t{UINT32_MAX}) {
    throw std::invalid_argument("vocab size out of range");
  }
  token_sampler s;
  s.bound_ = static_cast<std::uint32_t>(vocab_size);
  return s;
}

token_sampler token_sampler::from_tokenizer(std::shared_ptr<const text::tokenizer> tok) {
  token_sampler s;
  for (token_id id = 0; id < tok->id_bound(); ++id) {
    if (!tok->token_bytes(id).empty() && !tok->is_special(id)) s.allowed_.push_back(id);
  }
  if (s.allowed_.empty()) throw std::runtime_error("the tokenizer has no ordinary token");
  s.bound_ = tok->id_bound();
  s.tok_ = std::move(tok);
  return s;
}

std::vector<token_id> token_sampler::draw(std::mt19937_64& rng, std::size_t num_ids) const {
  std::uniform_int_distribution<std::size_t> pick(0, num_choices() - 1);
  std::vector<token_id> ids(num_ids);
  for (token_id& id : ids) {
    const std::size_t k = pick(rng);
    id = allowed_.empty() ? static_cast<token_id>(k) : allowed_[k];
  }
  return ids;
}

std::string token_sampler::decode(const std::vector<token_id>& ids) const {
  if (!tok_) throw std::logic_error("token_sampler::decode without a tokenizer");
  return tok_->decode(ids);
}

}  // namespace courier::bench_tool
