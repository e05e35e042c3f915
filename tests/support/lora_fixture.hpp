#pragma once
// LoRA adapters for tests, made by tests/lora/make-lora.mjs (Node, no packages) from a fixture
// model: a random PEFT adapter and the same model with it merged into its weights (f32), the
// independent reference an adapter's outputs are compared with. Each lives in a fresh folder
// under /tmp, removed when the fixture goes.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/support/fixtures.hpp"
#include "tests/support/run_command.hpp"

namespace courier::test {

class lora_fixture {
 public:
  // args: make-lora.mjs's options past --model and --out (--seed, --rank, --alpha, --targets...).
  lora_fixture(const std::string& model_name, const std::string& args) {
    char tmpl[] = "/tmp/courier-lora-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("lora_fixture: mkdtemp failed");
    dir_ = tmpl;
    const std::string cmd = "node " + data_dir() + "/../lora/make-lora.mjs --model " +
                            model_dir(model_name) + " --out " + dir_ + " " + args;
    const command_result r = run_command(cmd);
    if (r.status != 0) {
      throw std::runtime_error("lora_fixture: " + cmd + " failed: " + r.out + r.err);
    }
  }
  ~lora_fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  lora_fixture(const lora_fixture&) = delete;
  lora_fixture& operator=(const lora_fixture&) = delete;

  std::string adapter() const { return dir_ + "/adapter"; }
  std::string merged() const { return dir_ + "/merged"; }

 private:
  std::string dir_;
};

}  // namespace courier::test
