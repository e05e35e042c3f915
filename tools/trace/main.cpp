// courier-trace: inspects the actor-trace files that `courier serve` writes
// (telemetry.trace.path). See tools/trace/README.md.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/trace/chrome_export.hpp"
#include "tools/trace/request_timeline.hpp"
#include "tools/trace/summary.hpp"
#include "tools/trace/svg_plot.hpp"
#include "tools/trace/trace_file.hpp"

namespace {

using namespace courier::trace_tool;

constexpr const char* usage_text = R"(usage: courier-trace FILE COMMAND [ARGS]
       courier-trace COMMAND FILE [ARGS]

Inspects an actor-trace file written by `courier serve` (JSON Lines, header
{"format":"courier-trace","version":1,...}).

commands:
  summary                  span statistics per actor and message, engine step times and
                           sizes with histograms, per-request queue/prefill/decode times
  request ID               one request's timeline across the actors; ID is its number (the
                           spans' req) or its HTTP id (x-request-id), which the trace records
  export --chrome OUT.json Chrome trace-event JSON for chrome://tracing or ui.perfetto.dev
  plot OUT.svg             an SVG timeline: a lane per actor, step sizes, a legend

OUT may be "-" for standard output.
exit status: 0 success, 1 unreadable or invalid trace or output, 2 bad usage.
)";

const std::vector<std::string> commands = {"summary", "request", "export", "plot"};

class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool is_command(const std::string& word) {
  return std::find(commands.begin(), commands.end(), word) != commands.end();
}

struct invocation {
  std::string file;
  std::string command;
  std::vector<std::string> args;
};

// Either order of FILE and COMMAND: the word that names a command is the command (write
// ./summary for a file called "summary").
invocation parse(const std::vector<std::string>& words) {
  if (words.size() < 2) throw usage_error("expected a trace file and a command");
  invocation inv;
  if (is_command(words[0])) {
    inv.command = words[0];
    inv.file = words[1];
  } else if (is_command(words[1])) {
    inv.file = words[0];
    inv.command = words[1];
  } else {
    throw usage_error(
        fmt::format("unknown command '{}' (expected summary, request, export or "
                    "plot)",
                    words[1]));
  }
  inv.args.assign(words.begin() + 2, words.end());
  const auto expect_args = [&](std::size_t n, const char* what) {
    if (inv.args.size() != n) {
      throw usage_error(fmt::format("'{}' takes {}", inv.command, what));
    }
  };
  if (inv.command == "summary") expect_args(0, "no arguments");
  if (inv.command == "request") expect_args(1, "one request id");
  if (inv.command == "plot") expect_args(1, "one output file (OUT.svg)");
  if (inv.command == "export") {
    if (inv.args.size() == 1 && inv.args[0].rfind("--chrome=", 0) == 0) {
      inv.args = {"--chrome", inv.args[0].substr(9)};
    }
    if (inv.args.size() != 2 || inv.args[0] != "--chrome" || inv.args[1].empty()) {
      throw usage_error("'export' takes --chrome OUT.json (the only format)");
    }
  }
  return inv;
}

// A request's number: the one whose HTTP id (x-request-id) is `text`, else `text` read as a
// number.
std::int64_t parse_request_id(const std::string& text, const trace& t) {
  for (const auto& [req, http_id] : t.request_ids) {
    if (http_id == text) return req;
  }
  std::size_t used = 0;
  long long id = -1;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || id < 0) {
    throw usage_error(fmt::format(
        "request id must be a non-negative integer or a request's x-request-id in the trace, "
        "got '{}'",
        text));
  }
  return id;
}

// Writes through `write` to `path` ("-" is stdout); a failed write is a trace_error (exit 1).
template <class Write>
void write_output(const std::string& path, Write write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw trace_error("cannot write to standard output");
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw trace_error(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  write(out);
  out.close();
  if (!out) throw trace_error(fmt::format("{}: write failed", path));
}

int run(const invocation& inv) {
  const trace t = read_trace_file(inv.file, std::cerr);
  const std::int64_t id = inv.command == "request" ? parse_request_id(inv.args[0], t) : 0;
  if (inv.command == "summary") write_summary(t, std::cout);
  if (inv.command == "request") write_request_timeline(t, id, std::cout);
  if (inv.command == "export") {
    write_output(inv.args[1], [&](std::ostream& out) { write_chrome_trace(t, out); });
  }
  if (inv.command == "plot") {
    write_output(inv.args[0], [&](std::ostream& out) { write_svg_plot(t, out); });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> words(argv + 1, argv + argc);
  for (const std::string& w : words) {
    if (w == "--help" || w == "-h") {
      std::cout << usage_text;
      return 0;
    }
  }
  try {
    return run(parse(words));
  } catch (const usage_error& e) {
    std::cerr << "courier-trace: " << e.what() << "\n\n" << usage_text;
    return 2;
  } catch (const trace_error& e) {
    std::cerr << "courier-trace: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "courier-trace: " << e.what() << '\n';
    return 1;
  }
}
