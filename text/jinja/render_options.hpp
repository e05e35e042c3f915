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
  // Evaluation steps: one per statement and expression evaluated, one per loop iteration or
  // list item built, and one per 64 bytes of text built. A real chat template uses a few
  // thousand per message.
  std::uint64_t max_steps = 20'000'000;
  // The rendered text, and any one string built on the way.
  std::size_t max_output_bytes = std::size_t{64} << 20;
  // Nested evaluation (expressions within statements within macro calls): bounds the stack.
  int max_depth = 500;
  // The clock strftime_now() reads; empty: the system clock, in local time as Python does.
  std::optional<std::time_t> now;
};

}  // namespace courier::text::jinja
