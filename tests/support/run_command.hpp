#pragma once
// Runs a shell command in tests and captures its stdout, stderr and exit status.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace courier::test {

struct command_result {
  int status = -1;
  std::string out;
  std::string err;
};

inline command_result run_command(const std::string& cmd) {
  static int counter = 0;
  const std::string err_path =
      "/tmp/courier_test_stderr_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  command_result r;
  FILE* p = ::popen((cmd + " 2>" + err_path).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(err_path);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}

// The `courier` binary, for the test binaries built beside it (courier_tests; the emulated
// integration tests run the server in their own process and do not define it).
#ifdef COURIER_BINARY
inline std::string courier_binary() { return COURIER_BINARY; }
#endif
// The same cli on the emulated CUDA backend (tests/CMakeLists.txt: courier_emulated).
#ifdef COURIER_EMULATED_BINARY
inline std::string courier_emulated_binary() { return COURIER_EMULATED_BINARY; }
#endif

}  // namespace courier::test
