#pragma once
// The emulated NCCL's model of one clique of ranks in this process (README.md here): how the
// ranks' parts of a collective meet, what the collective writes, abort, and the timeout that
// turns a rank that never arrives into a failed test. Internal to courier_emu_nccl.
#include <nccl.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace courier::cuda_emu::libs::nccl {

// One rank's part of a collective, its arguments as at the call.
struct part {
  enum kind { all_reduce, all_gather } what = all_reduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // all-gather: sendcount
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
};

std::size_t type_bytes(ncclDataType_t t);  // 0: not a valid ncclDataType_t
bool reducible(ncclDataType_t t);          // the types the emulated all-reduce computes

class clique {
 public:
  explicit clique(std::vector<int> devices) : devices_(std::move(devices)), ran_(devices_.size()) {}

  int size() const { return static_cast<int>(devices_.size()); }
  int device(int rank) const { return devices_[static_cast<std::size_t>(rank)]; }

  // Rank `rank`'s part, as its stream runs it. Parts pair up by their number among the rank's
  // parts run so far (the k-th part of every rank together, so graph replays pair up too). The
  // part blocks until every rank's k-th part has arrived, running the other ranks' devices'
  // ready work meanwhile, as their GPUs would; the last to arrive computes the
  // collective and writes every rank's output; then all return. After abort: returns at once,
  // writing nothing. A part waiting longer than the timeout (COURIER_CUDA_EMU_NCCL_TIMEOUT_S,
  // 60 s by default) ends the process with a message on stderr, where hardware would hang.
  void arrive(int rank, part p);

  // ncclCommAbort of any of the clique's communicators: wakes every waiting part.
  void abort();

 private:
  struct slot {
    std::vector<part> parts;
    int arrived = 0, left = 0;
    bool done = false;
  };
  void complete(std::uint64_t k, const slot& s) const;
  // Until `s` is done or the clique aborted; past the timeout, ends the process.
  void wait_for_others(std::unique_lock<std::mutex>& lock, int rank, std::uint64_t k,
                       const slot& s);

  std::vector<int> devices_;  // rank r's device ordinal
  std::mutex m_;
  std::condition_variable cv_;
  bool aborted_ = false;
  std::vector<std::uint64_t> ran_;       // each rank's parts run so far
  std::map<std::uint64_t, slot> slots_;  // by part number, until every rank has left it
};

}  // namespace courier::cuda_emu::libs::nccl
