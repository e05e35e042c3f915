#pragma once
// Internal to gpu/model: reading the JSON files of a model or adapter folder (config.json,
// adapter_config.json) with errors that name the file, and the shapes they print.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/model/model_config.hpp"

namespace courier::model::detail {

// Throws model_error "PATH: PROBLEM", on one line (control characters from quoted text become
// spaces).
[[noreturn]] void fail(const std::string& path, const std::string& problem);
// The most a model's or adapter's JSON or text file may hold (config.json, adapter_config.json,
// generation_config.json, a shard index): read whole into memory.
constexpr std::uint64_t max_json_file_bytes = 64ull << 20;
// Opens `path` for reading when it is a regular file of at most `max_bytes` (0: any size):
// a FIFO, a device (/dev/zero), a folder or a larger file is a model_error naming it, and a
// FIFO never blocks the open. Returns the descriptor (the caller closes it) and its size; -1
// when the file does not exist.
int open_regular_file(const std::string& path, std::uint64_t max_bytes, std::uint64_t* size);
// The whole file, or nullopt when it does not exist; any other failure (open_regular_file's,
// a read error) is a model_error.
std::optional<std::string> read_file_if_exists(const std::string& path,
                                               std::uint64_t max_bytes = max_json_file_bytes);
// The deepest nesting a model's or adapter's JSON file may have (config.json files nest a few
// levels; an adapter can come from a request's path, so its files are bounded like a body).
constexpr int max_json_file_depth = 64;
// The text as a JSON object; malformed JSON, nesting past max_json_file_depth or another type is
// a model_error naming path.
nlohmann::json parse_json_object(const std::string& path, const std::string& text);
// "[2, 3]".
std::string shape_str(const std::vector<std::int64_t>& shape);

}  // namespace courier::model::detail
