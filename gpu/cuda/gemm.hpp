#pragma once
// out[M, N] = x[M, K] * w[N, K]^T (+ bias[N]) from bf16 with f32 accumulation, through cuBLASLt.
// Row-major x and w are column-major x^T and w^T, so this is C^T = w * x^T with A = w (op T),
// B = x (op N), C = out, all column-major, and cuBLASLt's BIAS epilogue adds bias per row of C^T.
//
// One algorithm per (M, N, K, bias, output type), chosen on the shape's first use and cached.
// With autotune (the default), cuBLASLt's heuristic gives up to 8 candidates; those that
// cublasLtMatmulAlgoCheck accepts are each run once to warm up and 3 times between timing events
// on the call's own buffers (the call's real run then overwrites the output), and the fastest is
// kept, a candidate within 2% of it counting as a tie that the earlier heuristic rank wins
// (pick_algorithm). A first use while the stream is capturing a CUDA graph cannot synchronize, so
// it runs heuristic #0 untimed and leaves the shape to be timed on a later uncaptured call.
// Without autotune, heuristic #0 is cached untimed. The workspace is allocated once.
//
// Note: cuBLASLt may pick a different algorithm (and split of K) for another M, so unlike the sim
// backend a row's result can differ in the last bits with the batch it is in.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace courier::gpu::cuda {

// One candidate's measurement: its place in cuBLASLt's heuristic order (0 first) and its time.
struct algo_time {
  int rank = 0;
  float ms = 0;
};

// The candidate autotuning keeps: the fastest, except that every candidate within 2% of the
// fastest time ties with it and a tie goes to the lowest rank, so that timing noise between two
// near-equal algorithms does not flip the choice from run to run. Non-finite times never win.
// Returns the winner's rank, or -1 when no time is finite. Host-only.
int pick_algorithm(const std::vector<algo_time>& times);

class gemm {
 public:
  struct options {
    bool autotune = true;  // time the heuristic's candidates per shape (above); false: take #0
    // Only shapes with at most this many rows are timed: decode batches, which recur every
    // step (and replay in graphs), where a bandwidth-bound GEMM gains most from the right
    // algorithm. Prefill chunks come in every size; timing each new one would stall it.
    std::int64_t autotune_max_m = 256;
  };

  gemm();
  explicit gemm(options o);
  ~gemm();
  gemm(const gemm&) = delete;
  gemm& operator=(const gemm&) = delete;

  // x, w: bf16 device pointers; out: bf16, or f32 when out_f32 (logits); bias (nullable): of
  // out's type (cuBLASLt's bias epilogue).
  void run(const void* x, const void* w, const void* bias, void* out, bool out_f32, std::int64_t m,
           std::int64_t n, std::int64_t k, cudaStream_t stream);

 private:
  // Invariants: candidates holds at least one algorithm, in heuristic order (rank 0 first);
  // `chosen` is set once the algorithm is final (timed, or autotune off).
  struct plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    std::vector<cublasLtMatmulAlgo_t> candidates;
    std::vector<int> ranks;  // each candidate's heuristic rank
    cublasLtMatmulAlgo_t algo{};
    bool chosen = false;
  };
  plan& plan_for(std::int64_t m, std::int64_t n, std::int64_t k, bool bias, bool out_f32);
  // Times p's candidates on these buffers (waits for the stream) and returns the winner.
  cublasLtMatmulAlgo_t tune(const plan& p, const void* x, const void* w, void* out,
                            cudaStream_t stream);
  cublasStatus_t matmul(const plan& p, const cublasLtMatmulAlgo_t& algo, const void* x,
                        const void* w, void* out, cudaStream_t stream);

  options options_;
  cublasLtHandle_t handle_ = nullptr;  // Owned.
  void* workspace_ = nullptr;          // Owned, device memory.
  std::size_t workspace_bytes_ = 32u << 20;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, bool>, plan> plans_;
};

}  // namespace courier::gpu::cuda
