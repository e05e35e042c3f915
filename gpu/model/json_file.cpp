#include "gpu/model/json_file.hpp"

#include "base/json_text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace courier::model::detail {

namespace {

std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return s;
}

}  // namespace

void fail(const std::string& path, const std::string& problem) {
  throw model_error(one_line(fmt::format("{}: {}", path, problem)));
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return std::nullopt;
    fail(path, fmt::format("cannot open file ({})", std::strerror(errno)));
  }
  std::string text;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) fail(path, fmt::format("cannot read file ({})", std::strerror(err)));
  return text;
}

nlohmann::json parse_json_object(const std::string& path, const std::string& text) {
  auto parsed = base::parse_json_text<nlohmann::json>(text, max_json_file_depth);
  if (parsed.error == base::json_text_error::too_deep) {
    fail(path, fmt::format("nests arrays and objects more than {} levels deep", max_json_file_depth));
  }
  if (!parsed) fail(path, fmt::format("malformed JSON: {}", parsed.message));
  nlohmann::json root = std::move(parsed.value);
  if (!root.is_object()) {
    fail(path, fmt::format("expected a JSON object, got {}", root.type_name()));
  }
  return root;
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace courier::model::detail
