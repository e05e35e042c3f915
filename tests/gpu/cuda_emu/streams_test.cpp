// The emulator's streams against the Runtime API's stream synchronization rules: work runs in
// queue order and as late as allowed; the legacy default stream and blocking streams wait for
// each other, non-blocking streams for neither (so a memset on the legacy stream is not ordered
// before a kernel on a non-blocking one); events mark queued work; queries never run anything.
#include "gpu/cuda_emu/streams.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_emu_streams {

namespace emu = courier::cuda_emu;

TEST_CASE("cuda emu streams: queued work runs in order, only when waited for", "[cuda_emu]") {
  emu::stream_set s;
  const int a = s.create(false);
  std::vector<std::string> ran;
  s.enqueue(a, [&] { ran.push_back("a1"); });
  s.enqueue(a, [&] { ran.push_back("a2"); });
  CHECK(ran.empty());
  CHECK_FALSE(s.idle(a));  // a query runs nothing
  CHECK(ran.empty());
  s.synchronize(a);
  CHECK(ran == std::vector<std::string>{"a1", "a2"});
  CHECK(s.idle(a));
}

TEST_CASE(
    "cuda emu streams: the legacy stream and blocking streams wait for each other; "
    "non-blocking streams for neither",
    "[cuda_emu]") {
  emu::stream_set s;
  const int blocking = s.create(false);
  const int free = s.create(true);
  std::vector<std::string> ran;
  s.enqueue(blocking, [&] { ran.push_back("b1"); });
  s.enqueue(free, [&] { ran.push_back("n1"); });
  s.enqueue(0, [&] { ran.push_back("legacy"); });
  s.enqueue(blocking, [&] { ran.push_back("b2"); });
  s.synchronize(0);  // the legacy work waits for b1 (queued before it), not for n1
  CHECK(ran == std::vector<std::string>{"b1", "legacy"});
  s.synchronize(blocking);
  CHECK(ran == std::vector<std::string>{"b1", "legacy", "b2"});
  s.synchronize(free);
  CHECK(ran.back() == "n1");

  // A memset on the legacy stream, then a kernel on a non-blocking stream that reads the
  // buffer: not ordered, so the kernel may read it before the memset (here it does).
  emu::stream_set t;
  const int nb = t.create(true);
  int buffer = 7, seen = -1;
  t.enqueue(0, [&] { buffer = 0; });      // cudaMemset(buffer, 0) on the legacy stream
  t.enqueue(nb, [&] { seen = buffer; });  // a kernel on the non-blocking stream
  t.synchronize(nb);
  CHECK(seen == 7);
  // On a blocking stream the same kernel runs after the memset.
  emu::stream_set u;
  const int bl = u.create(false);
  buffer = 7;
  u.enqueue(0, [&] { buffer = 0; });
  u.enqueue(bl, [&] { seen = buffer; });
  u.synchronize(bl);
  CHECK(seen == 0);
}

TEST_CASE("cuda emu streams: an event marks the work queued when it was recorded", "[cuda_emu]") {
  emu::stream_set s;
  const int producer = s.create(true), consumer = s.create(true);
  std::vector<std::string> ran;
  s.enqueue(producer, [&] { ran.push_back("p1"); });
  const emu::stream_mark e = s.record(producer);
  s.enqueue(producer, [&] { ran.push_back("p2"); });  // after the record: not in the event
  CHECK_FALSE(s.done(e));  // cudaEventQuery: not ready, and it runs nothing
  CHECK(ran.empty());
  s.wait_on(consumer, e);  // cudaStreamWaitEvent
  s.enqueue(consumer, [&] { ran.push_back("c1"); });
  s.synchronize(consumer);
  CHECK(ran == std::vector<std::string>{"p1", "c1"});
  CHECK(s.done(e));
  CHECK_FALSE(s.idle(producer));
  s.wait(e);  // cudaEventSynchronize on a finished event: nothing more runs
  CHECK(ran.size() == 2);
  s.synchronize_all();
  CHECK(ran.back() == "p2");
  // An event never recorded is complete.
  CHECK(s.done(emu::stream_mark{}));
  const std::function<void()> nothing = [] {};
  CHECK_THROWS_AS(s.enqueue(99, nothing), emu::emu_error);
}

TEST_CASE("cuda emu streams: a capture records work with its arguments; a launch replays it",
          "[cuda_emu]") {
  emu::stream_set s;
  const int st = s.create(true);
  std::vector<int> out;
  s.begin_capture(st);
  CHECK(s.capturing(st));
  for (int arg = 1; arg <= 2; ++arg) s.enqueue(st, [&out, arg] { out.push_back(arg); });
  const emu::stream_set::graph g = s.end_capture(st);
  CHECK(out.empty());  // recorded, not run
  CHECK(g.work.size() == 2);
  s.launch(st, g);
  s.launch(st, g);
  CHECK(out.empty());  // queued, run when waited for
  s.synchronize(st);
  CHECK(out == std::vector<int>{1, 2, 1, 2});
}

TEST_CASE("cuda emu streams: calls the Guide forbids during capture fail and invalidate it",
          "[cuda_emu]") {
  auto code = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const emu::capture_error& e) {
      return e.code;
    }
    return std::string("cudaSuccess");
  };
  emu::stream_set s;
  const int blocking = s.create(false), free = s.create(true);
  CHECK(code([&] { s.begin_capture(0); }) == "cudaErrorStreamCaptureUnsupported");
  // Synchronizing the capturing stream.
  s.begin_capture(free);
  CHECK(code([&] { s.synchronize(free); }) == "cudaErrorStreamCaptureUnsupported");
  CHECK(code([&] { s.end_capture(free); }) == "cudaErrorStreamCaptureInvalidated");
  // Querying it, and synchronizing the device.
  s.begin_capture(free);
  CHECK(code([&] { s.idle(free); }) == "cudaErrorStreamCaptureUnsupported");
  CHECK(code([&] { s.end_capture(free); }) == "cudaErrorStreamCaptureInvalidated");
  s.begin_capture(free);
  CHECK(code([&] { s.synchronize_all(); }) == "cudaErrorStreamCaptureUnsupported");
  CHECK(code([&] { s.end_capture(free); }) == "cudaErrorStreamCaptureInvalidated");
  // The legacy stream while a blocking stream captures: an implicit dependency.
  s.begin_capture(blocking);
  const std::function<void()> nothing = [] {};
  CHECK(code([&] { s.enqueue(0, nothing); }) == "cudaErrorStreamCaptureImplicit");
  CHECK(code([&] { s.end_capture(blocking); }) == "cudaErrorStreamCaptureInvalidated");
  // A non-blocking stream's capture does not mind the legacy stream.
  s.begin_capture(free);
  s.enqueue(0, nothing);
  s.enqueue(free, nothing);
  CHECK(s.end_capture(free).work.size() == 1);
}

TEST_CASE(
    "cuda emu streams: a stream waiting for an event runs the marked work when "
    "synchronized, with nothing queued after the wait",
    "[cuda_emu]") {
  emu::stream_set s;
  const int producer = s.create(true), consumer = s.create(true);
  int ran = 0;
  s.enqueue(producer, [&] { ++ran; });
  s.wait_on(consumer, s.record(producer));
  s.synchronize(consumer);
  CHECK(ran == 1);
  // An implicit synchronization runs queued work and leaves a capture alone.
  s.enqueue(producer, [&] { ++ran; });
  s.begin_capture(consumer);
  s.enqueue(consumer, [&] { ran += 100; });
  s.run_all();
  CHECK(ran == 2);
  CHECK(s.capturing(consumer));
  CHECK_FALSE(s.capture_invalidated(consumer));
  CHECK(s.end_capture(consumer).work.size() == 1);
}

TEST_CASE(
    "cuda emu streams: threads may enqueue and query while another runs blocking work; "
    "two waiting threads run work once",
    "[cuda_emu]") {
  emu::stream_set s;
  const int a = s.create(true), b = s.create(true);
  std::atomic<bool> release{false};
  std::atomic<int> runs{0};
  s.enqueue(a, [&] {
    ++runs;
    while (!release) std::this_thread::yield();  // a host function that blocks
  });
  std::thread first([&] { s.synchronize(a); });
  std::thread second([&] { s.synchronize(a); });
  // Meanwhile this thread queues and queries without waiting for the blocked work.
  s.enqueue(b, [] {});
  CHECK_FALSE(s.idle(b));
  release = true;
  first.join();
  second.join();
  CHECK(runs == 1);
  CHECK(s.idle(a));
}

TEST_CASE("cuda emu streams: a blocking capture makes the legacy stream unusable", "[cuda_emu]") {
  emu::stream_set s;
  const int blocking = s.create(false), free = s.create(true);
  s.begin_capture(free);
  CHECK_FALSE(s.blocking_capture());
  s.begin_capture(blocking);
  CHECK(s.blocking_capture());
  CHECK_THROWS_AS(s.synchronize(0), emu::capture_error);
  CHECK(s.capture_invalidated(blocking));
  CHECK_FALSE(s.capture_invalidated(free));
  s.invalidate_capture(free);
  CHECK(s.capture_invalidated(free));
  CHECK_THROWS_AS(s.end_capture(free), emu::capture_error);
  CHECK_THROWS_AS(s.end_capture(blocking), emu::capture_error);
}

// run_ready (not CUDA's: the device running its queue by itself, for the emulated NCCL): one
// item at a time, only one whose stream has run what came before it and whose waits are met,
// never one that a wait still holds back; nothing while another thread runs the device's work.
TEST_CASE("cuda emu streams: run_ready runs one ready item, never one still waiting",
          "[cuda_emu]") {
  emu::stream_set s;
  const int a = s.create(true), b = s.create(true);
  std::vector<std::string> ran;
  CHECK_FALSE(s.run_ready());  // nothing queued
  s.enqueue(a, [&] { ran.push_back("a1"); });
  const emu::stream_mark after_a1 = s.record(a);
  s.enqueue(a, [&] { ran.push_back("a2"); });
  s.wait_on(b, s.record(a));  // b's next item waits for a2
  s.enqueue(b, [&] { ran.push_back("b1"); });
  CHECK(s.run_ready());
  CHECK(ran == std::vector<std::string>{"a1"});  // b1 was not ready: a2 had not run
  CHECK(s.done(after_a1));
  int calls = 0;
  while (s.run_ready()) ++calls;  // a2, b's wait (an item of its own), b1
  CHECK(calls == 3);
  CHECK(ran == std::vector<std::string>{"a1", "a2", "b1"});
  // While another thread runs this device's work (a host function blocked in it), run_ready
  // leaves the device to that thread.
  std::atomic<bool> inside{false}, release{false};
  s.enqueue(a, [&] {
    inside = true;
    while (!release) std::this_thread::yield();
  });
  s.enqueue(b, [&] { ran.push_back("b2"); });
  std::thread runner([&] { s.synchronize(a); });
  while (!inside) std::this_thread::yield();
  CHECK_FALSE(s.run_ready());
  CHECK(ran.size() == 3);
  release = true;
  runner.join();
  CHECK(s.run_ready());
  CHECK(ran.back() == "b2");
}

}  // namespace courier_test_gpu_cuda_emu_streams
