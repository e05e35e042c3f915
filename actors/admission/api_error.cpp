#include "actors/admission/api_error.hpp"

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

}  // namespace courier::admission
