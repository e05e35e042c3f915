#pragma once
// A courier process started by a test (fork + exec), its stderr in a file the test can wait on,
// killed (SIGKILL) when the test says or when this goes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace courier::test {

class child_process {
 public:
  // stdout_too: its stdout goes to the same file as its stderr (else to /dev/null).
  explicit child_process(const std::vector<std::string>& argv, bool stdout_too = false) {
    static int counter = 0;
    err_path_ = "/tmp/courier_child_" + std::to_string(::getpid()) + "_" +
                std::to_string(counter++);
    pid_ = ::fork();
    if (pid_ == 0) {
      std::FILE* err = std::fopen(err_path_.c_str(), "w");
      if (err) ::dup2(::fileno(err), 2);
      std::FILE* null = std::fopen("/dev/null", "w");
      if (stdout_too && err) {
        ::dup2(::fileno(err), 1);
      } else if (null) {
        ::dup2(::fileno(null), 1);
      }
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~child_process() {
    kill();
    std::remove(err_path_.c_str());
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  void send(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Its exit: the exit code, 128 + the signal that ended it, or -1 when it is still running
  // after timeout_s (it is then left running).
  int wait_exit(int timeout_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() >= until) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  std::string stderr_text() const {
    std::ifstream f(err_path_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  // What follows `marker` on its stderr, up to the line's end, once it appears (empty after
  // timeout_s or if the process is gone).
  std::string wait_for(const std::string& marker, int timeout_s) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < until) {
      const std::string text = stderr_text();
      const std::size_t at = text.find(marker);
      if (at != std::string::npos) {
        const std::size_t end = text.find('\n', at);
        if (end != std::string::npos) return text.substr(at + marker.size(), end - at - marker.size());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return {};
  }

 private:
  pid_t pid_ = -1;
  std::string err_path_;
};

}  // namespace courier::test
