#pragma once
// An OpenAI-style error: {"error": {"message", "type", "param", "code"}} with an HTTP status.
// Thrown while a request is parsed and validated; answered by whoever owns the response.
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

namespace courier::admission {

struct api_error : std::runtime_error {
  int status;
  std::string type;   // OpenAI's error type: invalid_request_error, authentication_error, ...
  std::string param;  // the request field at fault; empty: none (null in the JSON)
  std::string code;   // OpenAI's string code where one exists (model_not_found,
                      // invalid_api_key, context_length_exceeded, ...); empty: null
  api_error(int status_code, std::string message, std::string param_name = {},
            std::string error_type = "invalid_request_error", std::string error_code = {})
      : std::runtime_error(std::move(message)),
        status(status_code),
        type(std::move(error_type)),
        param(std::move(param_name)),
        code(std::move(error_code)) {}
  nlohmann::json to_json() const;
};

// A 400 for the request field `field`: "'FIELD': WHAT", with param FIELD.
api_error bad_field(const std::string& field, const std::string& what);

}  // namespace courier::admission
