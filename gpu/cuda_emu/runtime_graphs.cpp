// The runtime's stream capture and graph calls (runtime.cpp has the rules every call follows):
// a capture records the stream's work with its arguments by value (stream_set), a graph is that
// recording, an executable graph a copy of it that a launch queues on a stream.
#include <algorithm>
#include <utility>

#include "gpu/cuda_emu/runtime_context.hpp"

namespace courier::cuda_emu::rt {

namespace {

// Takes the capture sequence of `s` out of the table: cudaStreamEndCapture must come from the
// thread that began it unless it is Relaxed (cudaErrorStreamCaptureWrongThread otherwise).
void end_capture_sequence(const stream_ref& s) {
  std::lock_guard<std::mutex> lock(ctx().handles);
  auto& all = ctx().captures;
  const auto it = std::find_if(all.begin(), all.end(), [&](const capture_info& c) {
    return c.device == s.device && c.stream == s.id;
  });
  if (it == all.end()) fail(error::illegal_state, "the stream is not capturing");
  if (it->mode != cudaStreamCaptureModeRelaxed && it->thread != std::this_thread::get_id()) {
    fail(error::stream_capture_wrong_thread);
  }
  all.erase(it);
}

template <class H>
graph_ptr find_graph(std::map<H, graph_ptr>& table, H h) {
  std::lock_guard<std::mutex> lock(ctx().handles);
  const auto it = table.find(h);
  if (it == table.end()) fail(error::invalid_value, "not a live graph");
  return it->second;
}

template <class H>
void erase_graph(std::map<H, graph_ptr>& table, H h) {
  std::lock_guard<std::mutex> lock(ctx().handles);
  if (table.erase(h) == 0) fail(error::invalid_value, "not a live graph");
}

}  // namespace

}  // namespace courier::cuda_emu::rt

using namespace courier::cuda_emu;
using namespace courier::cuda_emu::rt;

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return call([&] {
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed) {
      fail(error::invalid_value);
    }
    const stream_ref s = stream_of(stream);
    streams_of(s.device).begin_capture(s.id);
    std::lock_guard<std::mutex> lock(ctx().handles);
    ctx().captures.push_back({s.device, s.id, mode, std::this_thread::get_id()});
  });
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return call([&] {
    if (pGraph == nullptr) fail(error::invalid_value);
    const stream_ref s = stream_of(stream);
    end_capture_sequence(s);
    auto g = std::make_shared<const stream_set::graph>(streams_of(s.device).end_capture(s.id));
    std::lock_guard<std::mutex> lock(ctx().handles);
    *pGraph = new_handle<cudaGraph_t>();
    ctx().graphs.emplace(*pGraph, std::move(g));
  });
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  return call([&] {
    if (pCaptureStatus == nullptr) fail(error::invalid_value);
    const stream_ref s = stream_of(stream);
    const stream_set& set = streams_of(s.device);
    if (s.id == 0 && set.blocking_capture()) fail(error::stream_capture_implicit);
    *pCaptureStatus = set.capture_invalidated(s.id) ? cudaStreamCaptureStatusInvalidated
                      : set.capturing(s.id)         ? cudaStreamCaptureStatusActive
                                                    : cudaStreamCaptureStatusNone;
  });
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  return call([&] {
    if (pGraphExec == nullptr || flags != 0) fail(error::invalid_value);
    graph_ptr g = find_graph(ctx().graphs, graph);
    std::lock_guard<std::mutex> lock(ctx().handles);
    *pGraphExec = new_handle<cudaGraphExec_t>();
    ctx().execs.emplace(*pGraphExec, std::move(g));  // the recording is immutable: shared
  });
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return call([&] {
    const graph_ptr g = find_graph(ctx().execs, graphExec);
    const stream_ref s = stream_of(stream);
    streams_of(s.device).launch(s.id, *g);
  });
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return call([&] { erase_graph(ctx().graphs, graph); });
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return call([&] { erase_graph(ctx().execs, graphExec); });
}

}  // extern "C"
