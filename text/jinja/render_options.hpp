#pragma once
// The bounds on the work one render may do. A template is code from a model repository, and
// the context is a user's request: neither may hang the server or exhaust its memory. Going
// past a bound is a template_error naming it.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>

namespace courier::text::jinja {

struct render_options {
  // Evaluation steps: one per statement and expression evaluated and per loop iteration, two
  // per list or mapping item built, one per 32 bytes of text built. The five reference
  // templates use 30 to 80 per message; the default allows about a second of work and a few
  // hundred MB of allocation at most.
  std::uint64_t max_steps = 10'000'000;
  // The rendered text, and any one string built on the way (32 MiB: some 8M tokens).
  std::size_t max_output_bytes = std::size_t{32} << 20;
  // Nested evaluation (expressions within statements within macro calls): bounds the stack.
  int max_depth = 500;
  // The clock strftime_now() reads; empty: the system clock, in local time as Python does.
  std::optional<std::time_t> now;
};

}  // namespace courier::text::jinja
