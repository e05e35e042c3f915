// `courier serve` and the signals a process gets in production: SIGPIPE (a client gone
// mid-write) is ignored, as every server ignores it; SIGUSR1 and SIGUSR2 are logged and ignored;
// SIGHUP, like SIGTERM, is a clean stop that says so and exits 0. Before, each of SIGPIPE,
// SIGUSR1 and SIGHUP killed the server without a line.
#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "tests/support/child_process.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/run_command.hpp"

namespace courier_test_integration_serve_signals {

using namespace courier;

namespace {

std::unique_ptr<test::child_process> start_server() {
  auto p = std::make_unique<test::child_process>(
      std::vector<std::string>{test::courier_binary(), "serve", "--model",
                               test::model_dir("tiny-qwen3"), "--backend", "sim", "--set",
                               "server.port=0", "--set", "device.sim.threads=1", "--set",
                               "device.sim.memory_mb=256", "--set", "scheduler.num_kv_blocks=64"},
      /*stdout_too=*/true);
  const std::string up = p->wait_for("courier: serving ", 60);
  INFO(p->stderr_text());
  REQUIRE_FALSE(up.empty());
  return p;
}

}  // namespace

TEST_CASE("serve: SIGPIPE, SIGUSR1 and SIGUSR2 leave it serving; SIGHUP stops it cleanly",
          "[integration][signals]") {
  auto p = start_server();
  for (const int sig : {SIGPIPE, SIGUSR1, SIGUSR2}) p->send(sig);
  CHECK(p->wait_for("courier: SIGUSR2 received", 20) == " and ignored");
  CHECK(p->wait_exit(0) == -1);  // still running
  const std::string log = p->stderr_text();
  CHECK(log.find("courier: SIGUSR1 received and ignored") != std::string::npos);
  CHECK(log.find("SIGPIPE") == std::string::npos);  // ignored without a word

  p->send(SIGHUP);
  const int code = p->wait_exit(60);
  INFO(p->stderr_text());
  CHECK(code == 0);
  CHECK(p->stderr_text().find("courier: SIGHUP received, finishing in-flight requests") !=
        std::string::npos);
  CHECK(p->stderr_text().find("courier: stopped") != std::string::npos);
}

}  // namespace courier_test_integration_serve_signals
