#pragma once
// A blocking HTTP/1.1 client over a POSIX socket for the server's tests. Every read and write
// has a timeout, so a server bug fails a test instead of hanging it. It parses just enough of a
// response, independently of the server's code: the status line, headers, and a Content-Length,
// chunked or read-to-close body.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace courier::http::test {

struct reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // de-chunked

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
};

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class raw_client {
 public:
  // receive_buffer_bytes > 0: SO_RCVBUF, set before connecting (so the TCP window is small
  // from the start: a client that does not read then stalls the server's writes soon).
  explicit raw_client(std::uint16_t port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5),
                      int receive_buffer_bytes = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) fail("socket");
    if (receive_buffer_bytes > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof receive_buffer_bytes);
    }
    timeval tv{};
    tv.tv_sec = static_cast<long>(timeout.count() / 1000);
    tv.tv_usec = static_cast<long>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  }
  ~raw_client() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  void write(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) fail("send");
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // The status line and headers only.
  reply read_head() {
    reply r;
    std::string status_line = take_line();
    if (status_line.compare(0, 9, "HTTP/1.1 ") != 0 || status_line.size() < 12) {
      throw std::runtime_error("bad status line: " + status_line);
    }
    r.status = std::stoi(status_line.substr(9, 3));
    for (std::string line = take_line(); !line.empty(); line = take_line()) {
      auto colon = line.find(':');
      if (colon == std::string::npos) throw std::runtime_error("bad header line: " + line);
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[lower(line.substr(0, colon))] = value;
    }
    return r;
  }

  // A whole response.
  reply read_reply() {
    reply r = read_head();
    if (lower(r.header("transfer-encoding")) == "chunked") {
      while (auto chunk = read_chunk()) r.body += *chunk;
    } else if (r.has_header("content-length")) {
      r.body = take(std::stoul(r.header("content-length")));
    } else if (r.status >= 200 && r.status != 204 && r.status != 304) {
      r.body = read_until_close();
    }
    return r;
  }

  // The next chunk's data of a chunked body; nothing at the last chunk (trailers are skipped).
  std::optional<std::string> read_chunk() {
    std::string size_line = take_line();
    std::size_t size = std::stoul(size_line, nullptr, 16);
    if (size == 0) {
      while (!take_line().empty()) {
      }
      return std::nullopt;
    }
    std::string data = take(size);
    if (!take_line().empty()) throw std::runtime_error("chunk not followed by CRLF");
    return data;
  }

  // Exactly n bytes of the body of an unchunked stream.
  std::string read_exactly(std::size_t n) { return take(n); }

  std::string read_until_close() {
    while (fill()) {
    }
    std::string out = std::move(buf_);
    buf_.clear();
    return out;
  }

  // True if the server closes the connection (EOF or reset) within the timeout with nothing
  // more to read; false if bytes arrive or the timeout passes.
  bool closed_by_server() {
    if (!buf_.empty()) return false;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    buf_.push_back(c);
    return false;
  }

  // True if a response byte is already waiting to be read (without waiting for one).
  bool has_bytes_now() {
    if (!buf_.empty()) return true;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return n > 0;
  }

  // Half-closes (FIN): the server sees EOF.
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  // Closes with a reset (RST) instead of a FIN.
  void reset() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      throw std::runtime_error(std::string(what) + ": timed out waiting for the server");
    }
    throw std::runtime_error(std::string(what) + ": " + std::strerror(e));
  }

  // Reads more into buf_; false on EOF.
  bool fill() {
    char tmp[16384];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n < 0) fail("recv");
    if (n == 0) return false;
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  std::string take_line() {
    std::size_t pos;
    while ((pos = buf_.find("\r\n")) == std::string::npos) {
      if (!fill()) throw std::runtime_error("connection closed in the middle of a line");
    }
    std::string line = buf_.substr(0, pos);
    buf_.erase(0, pos + 2);
    return line;
  }

  std::string take(std::size_t n) {
    while (buf_.size() < n) {
      if (!fill()) throw std::runtime_error("connection closed in the middle of a body");
    }
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

  int fd_ = -1;
  std::string buf_;  // received, not yet consumed
};

}  // namespace courier::http::test
