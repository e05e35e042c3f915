#include "gpu/cuda/nccl_collectives.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"

namespace courier::gpu::cuda {

namespace {

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    throw std::runtime_error(fmt::format("NCCL: {}: {}", what, ncclGetErrorString(r)));
  }
}

ncclDataType_t nccl_type(dtype t) {
  switch (t) {
    case dtype::f32:
      return ncclFloat32;
    case dtype::bf16:
      return ncclBfloat16;
    case dtype::f16:
      return ncclFloat16;
    default:
      throw std::invalid_argument("NCCL collectives: f32, bf16 or f16 tensors only");
  }
}

// The communicators of one group, destroyed together (or aborted: a rank failed).
struct comms {
  std::vector<ncclComm_t> c;
  std::mutex m;
  bool aborted = false;
  ~comms() {
    if (aborted) return;  // ncclCommAbort freed them
    for (ncclComm_t x : c) (void)ncclCommDestroy(x);
  }
};

class nccl_rank final : public collectives {
 public:
  nccl_rank(std::shared_ptr<comms> group, int rank, cuda_placement where)
      : group_(std::move(group)), rank_(rank), where_(where) {}
  ~nccl_rank() override {
    for (void* p : scratches_) (void)cudaFree(p);
  }

  std::int32_t rank() const override { return rank_; }
  std::int32_t size() const override { return static_cast<std::int32_t>(group_->c.size()); }

  void all_reduce_sum(tensor_view x) override {
    nccl_check(ncclAllReduce(x.data, x.data, static_cast<std::size_t>(x.rows * x.cols),
                             nccl_type(x.type), ncclSum, comm(), stream()),
               "all-reduce");
  }

  // NCCL gathers rank-major ([rank, R, C]); a strided copy per rank puts rank r's block at
  // columns [r C, (r + 1) C) of each row.
  void all_gather_cols(tensor_view in, tensor_view out) override {
    const std::size_t n = static_cast<std::size_t>(in.rows * in.cols);
    const std::size_t bytes = n * 4 * static_cast<std::size_t>(size());
    if (in.type != dtype::f32 || out.type != dtype::f32) {
      throw std::invalid_argument("NCCL all_gather_cols: f32 only");
    }
    if (scratch_bytes_ < bytes) {
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      CUDA_CHECK(cudaStreamIsCapturing(stream(), &capturing));
      if (capturing != cudaStreamCaptureStatusNone) {  // the graph's step runs op by op
        throw std::runtime_error("NCCL all_gather_cols: no scratch of this size outside capture");
      }
      // The smaller one stays allocated: graphs captured with it replay into it.
      void* larger = nullptr;
      CUDA_CHECK(cudaMalloc(&larger, bytes));
      scratches_.push_back(larger);
      scratch_ = larger;
      scratch_bytes_ = bytes;
    }
    nccl_check(ncclAllGather(in.data, scratch_, n, ncclFloat32, comm(), stream()), "all-gather");
    const std::size_t row = static_cast<std::size_t>(in.cols) * 4;
    for (std::int32_t r = 0; r < size(); ++r) {
      CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(out.data) + r * row,
                                   row * static_cast<std::size_t>(size()),
                                   static_cast<char*>(scratch_) + r * n * 4, row, row,
                                   static_cast<std::size_t>(in.rows), cudaMemcpyDeviceToDevice,
                                   stream()));
    }
  }

  void abort(const std::string&) override {
    std::lock_guard<std::mutex> lock(group_->m);
    if (group_->aborted) return;
    group_->aborted = true;
    for (ncclComm_t x : group_->c) (void)ncclCommAbort(x);
  }

 private:
  ncclComm_t comm() const {
    if (group_->aborted) throw std::runtime_error("NCCL: the group was aborted");
    return group_->c[static_cast<std::size_t>(rank_)];
  }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(where_.stream); }

  std::shared_ptr<comms> group_;
  int rank_;
  cuda_placement where_;
  void* scratch_ = nullptr;  // [size, R, C] f32: all_gather_cols' landing place, the newest
  std::size_t scratch_bytes_ = 0;
  // Every landing place made, freed with the rank: a decode graph keeps the pointer it captured
  // (each a larger size than the one before, so at most a few).
  std::vector<void*> scratches_;
};

}  // namespace

std::vector<std::shared_ptr<collectives>> make_nccl_group(const std::vector<device*>& devs) {
  std::vector<int> ordinals;
  std::vector<cuda_placement> where;
  for (device* d : devs) {
    where.push_back(placement_of(*d));
    if (where.back().stream == nullptr) {
      throw std::invalid_argument("NCCL collectives: every device must be a CUDA device");
    }
    ordinals.push_back(where.back().ordinal);
  }
  auto group = std::make_shared<comms>();
  group->c.resize(devs.size());
  nccl_check(ncclCommInitAll(group->c.data(), static_cast<int>(devs.size()), ordinals.data()),
             "initialising the communicators");
  std::vector<std::shared_ptr<collectives>> out;
  for (std::size_t r = 0; r < devs.size(); ++r) {
    out.push_back(std::make_shared<nccl_rank>(group, static_cast<int>(r), where[r]));
  }
  return out;
}

}  // namespace courier::gpu::cuda
