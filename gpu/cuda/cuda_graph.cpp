#include "gpu/cuda/cuda_graph.hpp"

#include "gpu/cuda/cuda_check.hpp"

namespace courier::gpu::cuda {

namespace {

class cuda_graph final : public device_graph {
 public:
  cuda_graph(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~cuda_graph() override { cudaGraphExecDestroy(exec_); }
  cuda_graph(const cuda_graph&) = delete;
  cuda_graph& operator=(const cuda_graph&) = delete;

  void replay() override { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;  // Owned.
  cudaStream_t stream_;   // Borrowed: the device's stream.
};

// Ends a capture that failed part-way, dropping what it recorded and the stream's capture error.
void abandon(cudaStream_t stream) {
  cudaGraph_t partial = nullptr;
  cudaStreamEndCapture(stream, &partial);
  if (partial) cudaGraphDestroy(partial);
  cudaGetLastError();
}

}  // namespace

std::unique_ptr<device_graph> capture_graph(cudaStream_t stream,
                                            const std::function<void()>& body) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    body();
  } catch (...) {
    abandon(stream);
    throw;
  }
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(e);
  return std::make_unique<cuda_graph>(exec, stream);
}

}  // namespace courier::gpu::cuda
