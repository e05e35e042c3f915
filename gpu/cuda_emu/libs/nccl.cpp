// The emulated NCCL's entry points (README.md here), with nccl.h's signatures and the results
// NCCL documents. A communicator is one rank of a clique (nccl_clique.hpp); a collective is
// checked at the call and its rank's part queued on the call's stream.
#include <nccl.h>

#include <cstdio>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "gpu/cuda_emu/libs/emu_lib.hpp"
#include "gpu/cuda_emu/libs/nccl_clique.hpp"

using courier::cuda_emu::libs::host_work;
using courier::cuda_emu::libs::work_keeper;
namespace nc = courier::cuda_emu::libs::nccl;

// One rank's communicator; the parts captured into graphs through it live as long as it does.
struct ncclComm {
  std::shared_ptr<nc::clique> group;
  int rank = 0;
  work_keeper captured;
};

namespace {

// A rank's part, queued. It holds the clique, not the communicator: a part queued outside
// capture may run after its communicator is destroyed (the clique stays), and run() touches no
// member once it waits, since an abort may free captured work while it waits.
class part_work final : public host_work {
 public:
  part_work(std::shared_ptr<nc::clique> group, int rank, const nc::part& p)
      : group_(std::move(group)), rank_(rank), p_(p) {}
  void run() override {
    const std::shared_ptr<nc::clique> group = group_;
    if (!buffers_allocated()) {
      group->abort();  // the device has faulted: no rank waits for this one's part
      return;
    }
    group->arrive(rank_, p_);
  }

 private:
  // A GPU faults on a buffer freed since the call (a graph replayed after it): here the
  // device's sticky cudaErrorIllegalAddress, said on stderr.
  bool buffers_allocated() const {
    const int device = group_->device(rank_);
    const std::size_t bytes = p_.count * nc::type_bytes(p_.type);
    const std::size_t recv_bytes =
        p_.what == nc::part::all_gather ? bytes * static_cast<std::size_t>(group_->size()) : bytes;
    const char* what = p_.what == nc::part::all_gather ? "an emulated NCCL all-gather"
                                                       : "an emulated NCCL all-reduce";
    return bytes == 0 || (courierEmuDeviceRange(device, p_.send, bytes, what) != 0 &&
                          courierEmuDeviceRange(device, p_.recv, recv_bytes, what) != 0);
  }

  const std::shared_ptr<nc::clique> group_;
  const int rank_;
  const nc::part p_;
};

// NCCL's argument checks (ncclInvalidArgument): a communicator, a valid type, buffers when
// there is anything to move, each in device memory of the communicator's device (NCCL asks
// cudaPointerGetAttributes); a failure to queue is a CUDA error NCCL did not handle.
ncclResult_t enqueue(ncclComm_t comm, const nc::part& p, cudaStream_t stream) {
  if (comm == nullptr || nc::type_bytes(p.type) == 0) return ncclInvalidArgument;
  if (p.count > 0 && (p.send == nullptr || p.recv == nullptr)) return ncclInvalidArgument;
  const int device = comm->group->device(comm->rank);
  if (p.count > 0 && (courierEmuDeviceRange(device, p.send, 0, nullptr) == 0 ||
                      courierEmuDeviceRange(device, p.recv, 0, nullptr) == 0)) {
    return ncclInvalidArgument;
  }
  const cudaError_t e = courier::cuda_emu::libs::enqueue(
      stream, std::make_unique<part_work>(comm->group, comm->rank, p), comm->captured);
  return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

// devlist's ordinals (null: the first ndev devices): valid devices, each at most once (the
// user guide: one device as two ranks of a communicator is not supported).
ncclResult_t devices_of(int ndev, const int* devlist, std::vector<int>& devices) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return ncclUnhandledCudaError;
  for (int r = 0; r < ndev; ++r) {
    const int dev = devlist != nullptr ? devlist[r] : r;
    if (dev < 0 || dev >= count) return ncclInvalidArgument;
    for (const int seen : devices) {
      if (seen == dev) return ncclInvalidUsage;
    }
    devices.push_back(dev);
  }
  return ncclSuccess;
}

}  // namespace

COURIER_EMU_API const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

COURIER_EMU_API ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  if (comm == nullptr || ndev < 1) return ncclInvalidArgument;
  std::vector<int> devices;
  if (const ncclResult_t r = devices_of(ndev, devlist, devices); r != ncclSuccess) return r;
  const auto group = std::make_shared<nc::clique>(std::move(devices));
  for (int r = 0; r < ndev; ++r) {
    comm[r] = new ncclComm;
    comm[r]->group = group;
    comm[r]->rank = r;
  }
  return ncclSuccess;
}

COURIER_EMU_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;  // NULL: ncclSuccess, as NCCL answers
  return ncclSuccess;
}

COURIER_EMU_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  comm->group->abort();
  delete comm;
  return ncclSuccess;
}

COURIER_EMU_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->group->size();
  return ncclSuccess;
}

COURIER_EMU_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->group->device(comm->rank);
  return ncclSuccess;
}

COURIER_EMU_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

// Only f32, f16 and bf16 are summed here (what courier reduces); other valid types are refused
// with a line on stderr rather than computed wrongly.
COURIER_EMU_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream) {
  if (op < 0 || op >= ncclNumOps) return ncclInvalidArgument;
  if (nc::type_bytes(datatype) != 0 && !nc::reducible(datatype)) {
    std::fprintf(stderr, "courier emulated NCCL: all-reduce of type %d is not emulated\n",
                 static_cast<int>(datatype));
    return ncclInvalidArgument;
  }
  return enqueue(comm, {nc::part::all_reduce, sendbuff, recvbuff, count, datatype, op}, stream);
}

COURIER_EMU_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                           ncclDataType_t datatype, ncclComm_t comm,
                                           cudaStream_t stream) {
  return enqueue(comm, {nc::part::all_gather, sendbuff, recvbuff, sendcount, datatype, ncclSum},
                 stream);
}
