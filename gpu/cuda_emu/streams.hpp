#pragma once
// The emulator's streams and events, after the CUDA Runtime API's "Stream synchronization
// behavior" and event functions. Work queued on a stream runs as late as the rules allow: only
// when the host waits for it (stream or event synchronize) or other work that must follow it
// runs. Host code that reads a result before waiting, or changes a buffer a queued copy still
// reads, sees that in a test; the order CUDA promises is kept exactly:
// - a stream runs its work in the order queued;
// - the legacy default stream (stream 0) and the blocking streams of its device wait for each
//   other: work on the legacy stream runs after all work queued before it on the device's
//   blocking streams, and work on a blocking stream after all legacy-stream work queued before
//   it; a stream made with cudaStreamNonBlocking waits for neither;
// - an event marks the work its stream had queued when it was recorded; a stream made to wait
//   for it runs its later work after that work.
// Everything runs on the waiting host thread: no threads, so a test is deterministic.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_emu/emu_error.hpp"

namespace courier::cuda_emu {

// A point in a stream's work: done once its stream has run `count` items.
struct stream_mark {
  int stream = -1;  // -1: nothing (an event never recorded)
  std::uint64_t count = 0;
};

struct capture_error : emu_error {
  capture_error(const std::string& code, const std::string& what)
      : emu_error(code + ": " + what), code(code) {}
  std::string code;
};

class stream_set {
 public:
  stream_set();  // stream 0: the legacy default stream

  // cudaStreamCreateWithFlags(flags: blocking or cudaStreamNonBlocking): a new stream's id.
  int create(bool non_blocking);

  // Queues `work` on stream `s` (0: the legacy stream); it runs once something waits for it.
  void enqueue(int s, std::function<void()> work);

  // cudaStreamSynchronize: runs everything stream `s` has queued (and what it waits for).
  void synchronize(int s);
  // cudaDeviceSynchronize: every stream.
  void synchronize_all();
  // cudaStreamQuery: whether stream `s` has run everything queued on it (never runs anything).
  bool idle(int s) const;

  // cudaEventRecord: the mark of the work stream `s` has queued so far.
  stream_mark record(int s) const;
  // cudaEventQuery: whether the work `m` marks has run (never runs anything).
  bool done(const stream_mark& m) const;
  // cudaEventSynchronize: runs the work `m` marks.
  void wait(const stream_mark& m);
  // cudaStreamWaitEvent: work queued on `s` from now on runs after the work `m` marks.
  void wait_on(int s, const stream_mark& m);

  std::uint64_t ran(int s) const;  // items stream `s` has run

  // Graph capture (the Programming Guide's "CUDA Graphs", stream capture). While stream `s`
  // captures, work queued on it is recorded, not run (as recorded: a work item holds its
  // arguments by value); end_capture returns the recording. Refused as the Guide refuses them,
  // each throwing capture_error with the runtime's code, and each invalidating the capture
  // (end_capture then fails with cudaErrorStreamCaptureInvalidated): capturing the legacy
  // stream; synchronizing or querying a capturing stream, or synchronizing everything while one
  // captures (cudaErrorStreamCaptureUnsupported); queuing on the legacy stream while a blocking
  // stream captures (an implicit dependency: cudaErrorStreamCaptureImplicit).
  using graph = std::vector<std::function<void()>>;
  void begin_capture(int s);
  graph end_capture(int s);
  bool capturing(int s) const;
  // cudaGraphLaunch: the recording's work queued on `s`, in order.
  void launch(int s, const graph& g);

 private:
  struct item {
    std::function<void()> work;
    std::vector<stream_mark> after;  // what must have run first (other streams)
  };
  struct stream {
    bool non_blocking = false;
    std::vector<item> queued;  // all ever queued; [0, ran) have run
    std::uint64_t ran = 0;
    std::vector<stream_mark> waits;  // cudaStreamWaitEvent marks for the next item queued
    bool capturing = false;
    mutable bool invalidated = false;  // the capture hit a refused call (queries too)
    graph recorded;
  };
  [[noreturn]] void refuse_in_capture(int s, const std::string& code,
                                      const std::string& what) const;
  void check_not_capturing(int s, const char* call) const;
  void run_to(const stream_mark& m);
  stream& at(int s);
  const stream& at(int s) const;

  std::vector<stream> streams_;
  int running_depth_ = 0;
};

}  // namespace courier::cuda_emu
