#include "gpu/model/json_file.hpp"

#include "base/json_text.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

int open_regular_file(const std::string& path, std::uint64_t max_bytes, std::uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    fail(path, fmt::format("cannot open file ({})", std::strerror(errno)));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = fmt::format("cannot stat file ({})", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file (a FIFO, a device or a folder is never read)";
  } else if (max_bytes > 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    why = fmt::format("{} bytes, more than the {} such a file may have", st.st_size, max_bytes);
  }
  if (!why.empty()) {
    ::close(fd);
    fail(path, why);
  }
  *size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

std::optional<std::string> read_file_if_exists(const std::string& path, std::uint64_t max_bytes) {
  std::uint64_t size = 0;
  const int fd = open_regular_file(path, max_bytes, &size);
  if (fd < 0) return std::nullopt;
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {  // a file that grows meanwhile is read up to its size at open
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      fail(path, err ? fmt::format("cannot read file ({})", std::strerror(err))
                     : std::string("the file got shorter while it was read"));
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
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
