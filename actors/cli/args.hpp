#pragma once
// A small command-line reader for the courier subcommands: --flag value, --flag=value, and
// repeatable --set key=value. Unknown flags are errors that name the flag.
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace courier::cli {

class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class args {
 public:
  // `flags` lists the accepted value flags (without "--"); `switches` the boolean ones.
  args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& switches);

  std::optional<std::string> get(const std::string& flag) const;
  std::string get_or(const std::string& flag, const std::string& fallback) const;
  bool has(const std::string& sw) const { return switches_.count(sw) != 0; }
  const std::vector<std::string>& sets() const { return sets_; }  // --set values, in order

  // Typed getters: a malformed number is a usage_error naming the flag.
  std::optional<long long> get_int(const std::string& flag) const;
  std::optional<double> get_double(const std::string& flag) const;

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> switches_;
  std::vector<std::string> sets_;
};

// The command's config overrides: those its shorthands stand for (--backend NAME as
// device.backend, `model_path` as model.path), then its --set values, so a --set wins.
std::vector<std::string> config_sets(const args& a, const std::optional<std::string>& model_path);

// "1,2,3" -> {1,2,3}; throws usage_error naming `what` on anything else.
std::vector<unsigned> parse_id_list(const std::string& text, const std::string& what);

// Runs `body` with the command's usage errors (exit 2) and runtime errors (exit 1) reported
// as one line on stderr; a usage error is followed by `help` when given.
template <class F>
int run_command(const char* name, F&& body, const char* help = nullptr) {
  try {
    return body();
  } catch (const usage_error& e) {
    if (help) {
      std::fprintf(stderr, "courier %s: %s\n%s", name, e.what(), help);
    } else {
      std::fprintf(stderr, "courier %s: %s (see --help)\n", name, e.what());
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "courier %s: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace courier::cli
