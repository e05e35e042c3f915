#include "actors/admission/sentence_pooling.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_text.hpp"

namespace courier::admission {

using nlohmann::json;

namespace {

// The nesting these small files may have (base/json_text: every JSON text from outside is
// bounded before it is parsed).
constexpr int max_depth = 16;

// A JSON file of the folder, or null when absent; throws std::runtime_error naming the file
// when it does not parse.
json json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  base::parsed_json<json> parsed = base::parse_json_text<json>(text.str(), max_depth);
  if (!parsed) {
    throw std::runtime_error(path.string() + ": " +
                             (parsed.error == base::json_text_error::too_deep
                                  ? fmt::format("nested deeper than {} levels", max_depth)
                                  : parsed.message));
  }
  return std::move(parsed.value);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The Pooling module's config: last-token pooling and no other mode.
std::string pooling_refusal(const std::filesystem::path& config) {
  const json c = json_file(config);
  if (!c.is_object()) return config.string() + ": missing, or not a JSON object";
  if (c.value("pooling_mode_lasttoken", false) != true) {
    return config.string() +
           ": pooling_mode_lasttoken is not true (courier pools the last token "
           "only)";
  }
  for (const auto& [key, value] : c.items()) {
    if (key != "pooling_mode_lasttoken" && key.rfind("pooling_mode_", 0) == 0 && value == true) {
      return config.string() + ": " + key + " is true (courier pools the last token only)";
    }
  }
  return {};
}

}  // namespace

sentence_pooling read_sentence_pooling(const std::string& model_dir) {
  sentence_pooling p;
  const std::filesystem::path dir(model_dir);
  try {
    const json modules = json_file(dir / "modules.json");
    if (modules.is_null()) {
      p.refusal = (dir / "modules.json").string() +
                  ": missing (the folder declares no sentence-transformers pooling)";
      return p;
    }
    if (!modules.is_array()) {
      p.refusal = (dir / "modules.json").string() + ": expected a list of modules";
      return p;
    }
    bool pooled = false;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      const json& m = modules[i];
      const std::string type = m.is_object() ? m.value("type", "") : "";
      const std::string at = fmt::format("{}: [{}].type", (dir / "modules.json").string(), i);
      if (ends_with(type, "models.Transformer") && !pooled) continue;
      if (ends_with(type, "models.Pooling") && !pooled) {
        const std::string why = pooling_refusal(dir / m.value("path", "") / "config.json");
        if (!why.empty()) {
          p.refusal = why;
          return p;
        }
        pooled = true;
      } else if (ends_with(type, "models.Normalize") && pooled) {
        p.normalize = true;
      } else {
        p.refusal = fmt::format(
            "{} is '{}' (courier serves a Transformer, last-token Pooling and "
            "Normalize, in that order)",
            at, type);
        return p;
      }
    }
    if (!pooled) {
      p.refusal = (dir / "modules.json").string() + ": no sentence_transformers.models.Pooling";
      return p;
    }
    p.served = true;
  } catch (const std::exception& e) {
    p.refusal = e.what();
    p.normalize = false;
  }
  return p;
}

}  // namespace courier::admission
