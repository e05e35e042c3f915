#pragma once
// A real server (runtime + admission on an ephemeral port) for tests, and curl to talk to it.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/admission/admission_server.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/text_assets.hpp"

namespace courier::test {

struct server_fixture {
  actors::runtime rt;
  std::shared_ptr<admission::admission_context> ctx = std::make_shared<admission::admission_context>();
  std::unique_ptr<admission::admission_server> server;

  explicit server_fixture(config::server_config cfg) : rt(cfg) {
    cfg.server.port = 0;
    ctx->scheduler = rt.scheduler();
    ctx->telemetry = rt.telemetry();
    use_shared_text_assets(*ctx, cfg.model.path);
    admission::configure_context(*ctx, cfg, rt.ready());
    server = std::make_unique<admission::admission_server>(rt.system(), ctx, cfg);
  }
  ~server_fixture() {
    server->stop(std::chrono::milliseconds(0));
    server.reset();
    ctx->scheduler = nullptr;
    ctx->telemetry = nullptr;
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server->port()) + path;
  }
  msg::scheduler_stats stats() {
    caf::scoped_actor self{rt.system()};
    msg::scheduler_stats s;
    self->request(rt.scheduler(), caf::infinite, msg::stats_atom_v)
        .receive([&](msg::scheduler_stats& x) { s = x; }, [](caf::error&) {});
    return s;
  }
};

struct reply {
  int status = 0;
  std::string body;
  nlohmann::json j() const { return nlohmann::json::parse(body, nullptr, false); }
};

// Thread-safe: tests call it from several threads at once.
inline reply curl(const std::string& url, const std::string& body = "", const std::string& extra = "") {
  static std::atomic<int> n{0};
  const std::string in = "/tmp/courier_http_body_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  std::ofstream(in, std::ios::binary) << body;
  const std::string out = in + ".out";
  // --max-time: a server bug fails the test instead of hanging it.
  const std::string cmd = "curl -s --max-time 120 -o " + out + " -w '%{http_code}' " + extra +
                          (body.empty() ? "" : " -H 'content-type: application/json' --data-binary @" + in) +
                          " '" + url + "'";
  const auto r = test::run_command(cmd);
  reply rep;
  rep.status = std::atoi(r.out.c_str());
  std::ifstream f(out, std::ios::binary);
  rep.body.assign(std::istreambuf_iterator<char>(f), {});
  std::remove(in.c_str());
  std::remove(out.c_str());
  return rep;
}

}  // namespace courier::test
