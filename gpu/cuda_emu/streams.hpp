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
// Everything runs on the waiting host thread, so a single-threaded test is deterministic.
// Threads: every member may be called from any host thread. The queues have a short-held lock
// of their own; running work holds the set's run lock (one set: one device), so two threads
// waiting on the same work never run it twice (one runs it, the other waits for the lock and
// finds it done), and a thread may enqueue or query while another runs work that blocks.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cuda_emu/emu_error.hpp"

namespace courier::cuda_emu {

// A point in a stream's work: done once its stream has run `count` items.
struct stream_mark {
  int stream = -1;  // -1: nothing (an event never recorded)
  std::uint64_t count = 0;
};

// What a queued item is, for the counts (courierEmuGetWorkCounts): its kind, a
// courierEmuWorkKind of runtime_api.hpp (-1: not counted: an event's record, a wait), and the
// bytes it copies or sets.
struct work_tag {
  int kind = -1;
  std::uint64_t bytes = 0;
};
constexpr int work_kinds = 7;  // courierEmuWorkKinds
struct work_tally {
  std::array<std::uint64_t, work_kinds> calls{}, bytes{};
  void add(const work_tag& tag);
  void add(const work_tally& more);
};
struct work_counts {
  work_tally eager, in_graphs;  // queued outside a capture; in the graphs launched
  std::uint64_t graph_launches = 0;
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
  // Ids are never reused: a destroyed stream's queued work still runs when waited for.
  int create(bool non_blocking);
  bool non_blocking(int s) const;

  // Queues `work` on stream `s` (0: the legacy stream); it runs once something waits for it.
  // Returns the mark of the work queued on `s` up to it (an empty mark when `s` captures).
  // `tag` is counted: into the eager counts, or into the capture's graph.
  stream_mark enqueue(int s, std::function<void()> work, work_tag tag = {});

  // cudaStreamSynchronize: runs everything stream `s` has queued (and what it waits for).
  void synchronize(int s);
  // cudaDeviceSynchronize: every stream.
  void synchronize_all();
  // An implicit synchronization (cudaFree's): every stream's queued work runs; a capture is
  // left alone (its recording is not queued work).
  void run_all();
  // cudaStreamQuery: whether stream `s` has run everything queued on it (never runs anything).
  bool idle(int s) const;

  // cudaEventRecord: the mark of the work stream `s` has queued so far.
  stream_mark record(int s) const;
  // cudaEventQuery: whether the work `m` marks has run (never runs anything).
  bool done(const stream_mark& m) const;
  // cudaEventSynchronize: runs the work `m` marks.
  void wait(const stream_mark& m);
  // cudaStreamWaitEvent: work queued on `s` from now on runs after the work `m` marks (the wait
  // is an item of its own, so synchronizing `s` runs the marked work even if nothing follows).
  void wait_on(int s, const stream_mark& m);

  std::uint64_t ran(int s) const;  // items stream `s` has run (finished)

  // Not CUDA's: runs one item whose stream has run everything before it and whose waits are
  // met, as the device would with no host thread waiting (courierEmuRunReady, for the emulated
  // NCCL: a rank's collective waits for the other ranks' devices, which on hardware run their
  // queues by themselves). One item and nothing it waits for, so that a caller checking after
  // each never runs past what it needed. Returns false, running nothing, when no item is ready,
  // another thread is running this device's work, or this one already is.
  bool run_ready();

  // Graph capture (the Programming Guide's "CUDA Graphs", stream capture). While stream `s`
  // captures, work queued on it is recorded, not run (as recorded: a work item holds its
  // arguments by value); end_capture returns the recording. Refused as the Guide refuses them,
  // each throwing capture_error with the runtime's code, and each invalidating the capture
  // (end_capture then fails with cudaErrorStreamCaptureInvalidated): capturing the legacy
  // stream; synchronizing or querying a capturing stream, or synchronizing everything while one
  // captures (cudaErrorStreamCaptureUnsupported); queuing on the legacy stream while a blocking
  // stream captures (an implicit dependency: cudaErrorStreamCaptureImplicit).
  struct graph {
    std::vector<std::function<void()>> work;
    work_tally tally;  // what the work counts as, added again at each launch
  };
  void begin_capture(int s);
  graph end_capture(int s);
  bool capturing(int s) const;
  bool capture_invalidated(int s) const;  // capturing, and a refused call hit the capture
  // A refused call elsewhere (the runtime's capture modes) invalidates the capture on `s`.
  void invalidate_capture(int s);
  // Whether a blocking stream captures: the legacy stream is then unusable (cudaStreamIsCapturing
  // of it is cudaErrorStreamCaptureImplicit).
  bool blocking_capture() const;
  // cudaGraphLaunch: the recording's work queued on `s`, in order.
  void launch(int s, const graph& g);

  // The work queued so far, counted by its tags (courierEmuGetWorkCounts).
  work_counts counts() const;

 private:
  struct item {
    std::function<void()> work;
    std::vector<stream_mark> after;  // what must have run first (other streams)
  };
  struct stream {
    bool non_blocking = false;
    std::vector<item> queued;   // all ever queued; [0, ran) have run
    std::uint64_t started = 0;  // > ran while item `ran` runs
    std::uint64_t ran = 0;
    std::vector<stream_mark> waits;  // cudaStreamWaitEvent marks for the next item queued
    bool capturing = false;
    mutable bool invalidated = false;  // the capture hit a refused call (queries too)
    graph recorded;
  };
  // The helpers below expect state_ held.
  [[noreturn]] void refuse_in_capture(int s, const std::string& code,
                                      const std::string& what) const;
  void check_not_capturing(int s, const char* call) const;
  void refuse_implicit_capture() const;
  stream_mark enqueue_locked(int s, std::function<void()> work);
  stream_mark record_locked(int s) const { return {s, at(s).queued.size()}; }
  stream& at(int s);
  const stream& at(int s) const;
  // Runs the work `m` marks (and what it waits for); takes run_ (recursively: work that waits
  // for other work runs it on the same thread), state_ only between items.
  void run_to(const stream_mark& m);
  // One item of m's stream, once what it waits for has run: false when nothing is left.
  bool run_next(const stream_mark& m);

  mutable std::mutex state_;
  std::recursive_mutex run_;
  std::vector<stream> streams_;
  int running_depth_ = 0;          // under run_
  work_counts counts_;             // under state_
};

}  // namespace courier::cuda_emu
