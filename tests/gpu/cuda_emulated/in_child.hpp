#pragma once
// For the emulated libraries' tests of what must not touch the test process: a case whose device
// faults (a sticky error stays with the device for good) or that aborts runs it in a child.
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <csignal>
#include <functional>
#include <string>

namespace courier::test::emulated {

// What a forked child ended with: its wait status and everything it wrote to stderr.
struct child_end {
  int status = 0;
  std::string err;
};

// Runs `body` in a forked child, its stderr into a pipe read here, SIGABRT left to end it (not
// Catch's handler, which would report a failed case). `body` ends the child with _exit (else it
// exits 2), and uses no Catch assertion: one failing there would run the rest of the cases in
// the child.
inline child_end in_child(const std::function<void()>& body) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGABRT, SIG_DFL);
    dup2(pipe_fds[1], 2);
    body();
    _exit(2);
  }
  close(pipe_fds[1]);
  child_end end;
  char buf[256];
  for (ssize_t got; (got = read(pipe_fds[0], buf, sizeof buf)) > 0;) {
    end.err.append(buf, static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  REQUIRE(waitpid(child, &end.status, 0) == child);
  return end;
}

}  // namespace courier::test::emulated
