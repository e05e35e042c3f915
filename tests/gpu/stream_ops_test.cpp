// The device's stream op list (gpu/stream_ops.hpp) against the wrappers generated from it: every
// op is forwarded, recorded while capturing and replayed. An op a wrapper ran during capture
// would be missing from the replay, silently.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>

#include "gpu/forwarding_device.hpp"
#include "gpu/recording_device.hpp"
#include "gpu/stream_ops.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_stream_ops {

using namespace courier;

namespace {

// Counts each stream op by name instead of running it.
class op_counter final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;
  std::map<std::string, int> calls;
#define COURIER_COUNT_STREAM_OP(name, params, args) \
  void name params override {                       \
    (void)std::forward_as_tuple args;                 \
    ++calls[#name];                                   \
  }
  COURIER_STREAM_OPS(COURIER_COUNT_STREAM_OP)
#undef COURIER_COUNT_STREAM_OP
};

// Calls an op with default arguments (null pointers, empty views): the counter never reads them.
template <class... P>
void call_with_defaults(gpu::device& d, void (gpu::device::*op)(P...)) {
  (d.*op)(std::decay_t<P>{}...);
}

void call_every_op(gpu::device& d) {
#define COURIER_CALL_STREAM_OP(name, params, args) call_with_defaults(d, &gpu::device::name);
  COURIER_STREAM_OPS(COURIER_CALL_STREAM_OP)
#undef COURIER_CALL_STREAM_OP
}

std::size_t num_ops() {
  std::size_t n = 0;
#define COURIER_COUNT_OP(name, params, args) ++n;
  COURIER_STREAM_OPS(COURIER_COUNT_OP)
#undef COURIER_COUNT_OP
  return n;
}

}  // namespace

TEST_CASE("stream ops: a recording device records every op and replays each once",
          "[sim]") {
  auto counter = std::make_unique<op_counter>(gpu::make_sim_device(1, 64));
  op_counter* inner = counter.get();
  gpu::recording_device rec(std::move(counter));

  // Outside a capture, each op reaches the inner device at once, through the forwarding base.
  call_every_op(rec);
  REQUIRE(inner->calls.size() == num_ops());
  for (const auto& [op, n] : inner->calls) CHECK(n == 1);

  inner->calls.clear();
  std::unique_ptr<gpu::device_graph> graph = rec.capture([&] { call_every_op(rec); });
  REQUIRE(graph);
  CHECK(inner->calls.empty());  // nothing ran while recording
  graph->replay();
  graph->replay();
  REQUIRE(inner->calls.size() == num_ops());
  for (const auto& [op, n] : inner->calls) {
    INFO(op);
    CHECK(n == 2);
  }
}

}  // namespace courier_test_gpu_stream_ops
