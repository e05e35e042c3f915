#include "actors/admission/api_error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace courier::admission {

nlohmann::json api_error::to_json() const {
  using nlohmann::json;
  return {{"error",
           {{"message", what()},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

api_error bad_field(const std::string& field, const std::string& what) {
  return api_error(400, fmt::format("'{}': {}", field, what), field);
}

}  // namespace courier::admission
