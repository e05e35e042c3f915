#include "actors/admission/embedding_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "actors/admission/api_error.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// base64 (RFC 4648, with padding) of raw bytes: twenty lines where Debian's libraries would add
// a dependency for this one use.
std::string base64(const unsigned char* p, std::size_t n) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    const std::uint32_t b = (std::uint32_t{p[i]} << 16) |
                            (i + 1 < n ? std::uint32_t{p[i + 1]} << 8 : 0) |
                            (i + 2 < n ? std::uint32_t{p[i + 2]} : 0);
    out += digits[(b >> 18) & 63];
    out += digits[(b >> 12) & 63];
    out += i + 1 < n ? digits[(b >> 6) & 63] : '=';
    out += i + 2 < n ? digits[b & 63] : '=';
  }
  return out;
}

std::string base64_floats(const std::vector<float>& v) {
  std::vector<unsigned char> bytes(v.size() * 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    for (int k = 0; k < 4; ++k) bytes[i * 4 + k] = static_cast<unsigned char>(bits >> (8 * k));
  }
  return base64(bytes.data(), bytes.size());
}

}  // namespace

embedding_request parse_embedding_request(const std::string& body, const admission_context& ctx,
                                          const std::string& tenant) {
  const json j = parse_json_body(body, ctx.max_json_depth);
  if (!j.is_object()) throw api_error(400, "the body must be a JSON object");
  embedding_request r;
  if (!j.contains("model") || !j["model"].is_string()) {
    throw bad_field("model", "is required (a string)");
  }
  r.model = j["model"].get<std::string>();
  require_served_model(r.model, ctx);
  require_tenant_model(r.model, ctx, tenant);
  if (r.model != ctx.model_name) r.adapter = r.model;
  if (j.contains("encoding_format") && !j["encoding_format"].is_null()) {
    const json& f = j["encoding_format"];
    if (f != "float" && f != "base64")
      throw bad_field("encoding_format", "expected float or base64");
    r.base64 = f == "base64";
  }
  if (j.contains("dimensions") && !j["dimensions"].is_null() &&
      j["dimensions"] != json(ctx.hidden_size)) {
    throw bad_field("dimensions", fmt::format("this model's embeddings have {} dimensions, and "
                                              "are not shortened",
                                              ctx.hidden_size));
  }
  if (!j.contains("input") || j["input"].is_null()) throw bad_field("input", "is required");
  r.inputs = parse_prompts(j["input"], "input", ctx, max_embedding_inputs,
                           "OpenAI's bound on one request's inputs");
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    const auto len = static_cast<std::int64_t>(r.inputs[i].size());
    if (len >= ctx.max_model_len) {
      throw api_error(400,
                      fmt::format("this model's maximum context length is {} tokens; input {} "
                                  "has {} (an input may have {} at most)",
                                  ctx.max_model_len, i, len, ctx.max_model_len - 1),
                      "input", "invalid_request_error", "context_length_exceeded");
    }
  }
  return r;
}

std::string embeddings_body(const std::string& model, std::vector<std::vector<float>> vectors,
                            bool normalize, bool base64, std::int64_t prompt_tokens) {
  ordered_json data = ordered_json::array();
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    std::vector<float>& v = vectors[i];
    if (normalize) {
      double sum = 0;
      for (float x : v) sum += static_cast<double>(x) * x;
      // sentence-transformers' Normalize: F.normalize, whose norm is at least 1e-12.
      const double scale = 1.0 / std::max(std::sqrt(sum), 1e-12);
      for (float& x : v) x = static_cast<float>(x * scale);
    }
    ordered_json e = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      e["embedding"] = base64_floats(v);
    } else {
      e["embedding"] = v;
    }
    data.push_back(std::move(e));
  }
  return ordered_json{
      {"object", "list"},
      {"data", std::move(data)},
      {"model", model},
      {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}}
      .dump();
}

}  // namespace courier::admission
