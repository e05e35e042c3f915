#include "gpu/cuda_emu/libs/nccl_clique.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/cuda_emu/libs/emu_lib.hpp"

namespace courier::cuda_emu::libs::nccl {

namespace {

const char* kind_name(part::kind k) {
  return k == part::all_reduce ? "all-reduce" : "all-gather";
}

// Read at each wait, not once: a test may set it in a forked child to see a rank give up.
std::chrono::seconds timeout() {
  const char* v = std::getenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S");
  const long s = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
  return std::chrono::seconds(s > 0 ? s : 60);
}

[[noreturn]] void fail(const char* what, int rank, std::uint64_t k, const part& p) {
  std::fprintf(stderr,
               "courier emulated NCCL: rank %d, collective #%llu (%s of %zu elements): %s\n", rank,
               static_cast<unsigned long long>(k), kind_name(p.what), p.count, what);
  std::abort();
}

element element_of(ncclDataType_t t) {
  return t == ncclFloat32 ? element::f32 : t == ncclFloat16 ? element::f16 : element::bf16;
}

float combine(ncclRedOp_t op, float acc, float x) {
  switch (op) {
    case ncclProd:
      return acc * x;
    case ncclMax:
      return x > acc ? x : acc;
    case ncclMin:
      return x < acc ? x : acc;
    default:
      return acc + x;  // ncclSum, ncclAvg
  }
}

// Element by element in f32, over the ranks in rank order (each step rounded to f32; ncclAvg
// divides the sum by the rank count), rounded once to the type; into a copy first, so that
// in-place parts (sendbuff == recvbuff) read their inputs before any output is written.
void all_reduce(const std::vector<part>& parts) {
  const part& first = parts.front();
  const element t = element_of(first.type);
  std::vector<float> out(first.count);
  for (std::size_t i = 0; i < first.count; ++i) {
    const auto e = static_cast<std::int64_t>(i);
    float acc = load(t, first.send, e);
    for (std::size_t r = 1; r < parts.size(); ++r) {
      acc = combine(first.op, acc, load(t, parts[r].send, e));
    }
    out[i] = first.op == ncclAvg ? acc / static_cast<float>(parts.size()) : acc;
  }
  for (const part& p : parts) {
    for (std::size_t i = 0; i < first.count; ++i) {
      store(t, p.recv, static_cast<std::int64_t>(i), out[i]);
    }
  }
}

// Rank-major: rank r's sendcount elements at offset r * sendcount of every output, bytes as sent.
void all_gather(const std::vector<part>& parts) {
  const std::size_t block = parts.front().count * type_bytes(parts.front().type);
  std::vector<unsigned char> out(block * parts.size());
  for (std::size_t r = 0; r < parts.size(); ++r) {
    if (block > 0) std::memcpy(out.data() + r * block, parts[r].send, block);
  }
  for (const part& p : parts) {
    if (!out.empty()) std::memcpy(p.recv, out.data(), out.size());
  }
}

}  // namespace

std::size_t type_bytes(ncclDataType_t t) {
  static const std::size_t bytes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return t >= 0 && t < ncclNumTypes ? bytes[t] : 0;
}

bool reducible(ncclDataType_t t) {
  return t == ncclFloat32 || t == ncclFloat16 || t == ncclBfloat16;
}

// The ranks' k-th parts must be one collective (same kind, count, type, operation): NCCL leaves
// a mismatch undefined (a hang or corrupt data on hardware), so it ends the process here.
void clique::complete(std::uint64_t k, const slot& s) const {
  const part& first = s.parts.front();
  for (std::size_t r = 1; r < s.parts.size(); ++r) {
    const part& p = s.parts[r];
    if (p.what != first.what || p.count != first.count || p.type != first.type ||
        (first.what == part::all_reduce && p.op != first.op)) {
      fail("the ranks' parts differ (kind, count, type or operation)", static_cast<int>(r), k, p);
    }
  }
  if (first.what == part::all_reduce) {
    all_reduce(s.parts);
  } else {
    all_gather(s.parts);
  }
}

void clique::arrive(int rank, part p) {
  std::unique_lock<std::mutex> lock(m_);
  if (aborted_) return;
  const std::uint64_t k = ran_[static_cast<std::size_t>(rank)]++;
  slot& s = slots_[k];  // a map's elements stay where they are while others come and go
  if (s.parts.empty()) s.parts.resize(devices_.size());
  s.parts[static_cast<std::size_t>(rank)] = p;
  if (++s.arrived == size()) {
    complete(k, s);
    s.done = true;
    cv_.notify_all();
  } else {
    wait_for_others(lock, rank, k, s);
  }
  if (++s.left == size()) slots_.erase(k);
}

// On hardware every rank's device runs its own queue: a rank's part arrives whether or not a
// host thread waits on that device. The emulator runs queued work only when a host thread
// waits for it, so the waiting rank runs the other ranks' devices' ready work itself
// (courierEmuRunReady: a device another thread is running is left to that thread). Otherwise
// a host thread waiting on this rank's device (for a copy on another of its streams, say)
// would hold up the very work the others' parts wait behind.
void clique::wait_for_others(std::unique_lock<std::mutex>& lock, int rank, std::uint64_t k,
                             const slot& s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  while (!s.done && !aborted_) {
    lock.unlock();
    bool ran = false;
    for (int r = 0; r < size(); ++r) {
      if (r != rank) ran = courierEmuRunReady(device(r)) != 0 || ran;
    }
    lock.lock();
    if (s.done || aborted_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < size(); ++r) {
        std::fprintf(stderr, "courier emulated NCCL: rank %d (device %d) has run %llu parts\n", r,
                     device(r), static_cast<unsigned long long>(ran_[static_cast<std::size_t>(r)]));
      }
      fail("the other ranks' parts never arrived (COURIER_CUDA_EMU_NCCL_TIMEOUT_S)", rank, k,
           s.parts[static_cast<std::size_t>(rank)]);
    }
    if (!ran) cv_.wait_for(lock, std::chrono::milliseconds(1), [&] { return s.done || aborted_; });
  }
}

void clique::abort() {
  std::lock_guard<std::mutex> lock(m_);
  aborted_ = true;
  cv_.notify_all();
}

}  // namespace courier::cuda_emu::libs::nccl
