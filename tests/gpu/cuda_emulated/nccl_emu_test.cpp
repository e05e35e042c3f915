// The emulated NCCL (gpu/cuda_emu/libs), opened by path and its functions found by name as
// courier's lazy loader does, against NCCL's documented rules: one clique of ranks on the
// emulated devices, each rank driven from a host thread of its own on a stream of its own;
// all-reduce (f32, and bf16 and f16 summed in f32 in rank order, rounded once), in place too;
// all-gather rank-major; the k-th collective of each rank paired with the k-th of the others,
// graph replays included; an abort waking a rank that waits; a rank left waiting giving up;
// buffers checked at the call and, in a replay, when the part runs.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/dtype.hpp"
#include "tests/gpu/cuda_emulated/in_child.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_nccl_emu {

using namespace courier;
using test::emulated::in_child;
using test::emulated::child_end;

namespace {

struct api {
  void* lib = nullptr;
  decltype(&::ncclGetErrorString) error_string = nullptr;
  decltype(&::ncclCommInitAll) init_all = nullptr;
  decltype(&::ncclCommDestroy) destroy = nullptr;
  decltype(&::ncclCommAbort) abort = nullptr;
  decltype(&::ncclCommUserRank) user_rank = nullptr;
  decltype(&::ncclCommCuDevice) cu_device = nullptr;
  decltype(&::ncclCommCount) count = nullptr;
  decltype(&::ncclAllReduce) all_reduce = nullptr;
  decltype(&::ncclAllGather) all_gather = nullptr;
};

#define COURIER_TEST_LOAD(field, name) \
  a.field = reinterpret_cast<decltype(a.field)>(dlsym(a.lib, #name))

const api& nccl() {
  static const api loaded = [] {
    api a;
    a.lib = dlopen(COURIER_EMU_NCCL_PATH, RTLD_NOW | RTLD_LOCAL);
    if (a.lib == nullptr) return a;
    COURIER_TEST_LOAD(error_string, ncclGetErrorString);
    COURIER_TEST_LOAD(init_all, ncclCommInitAll);
    COURIER_TEST_LOAD(destroy, ncclCommDestroy);
    COURIER_TEST_LOAD(abort, ncclCommAbort);
    COURIER_TEST_LOAD(user_rank, ncclCommUserRank);
    COURIER_TEST_LOAD(cu_device, ncclCommCuDevice);
    COURIER_TEST_LOAD(count, ncclCommCount);
    COURIER_TEST_LOAD(all_reduce, ncclAllReduce);
    COURIER_TEST_LOAD(all_gather, ncclAllGather);
    return a;
  }();
  return loaded;
}

#undef COURIER_TEST_LOAD

// One rank's device, stream and device buffers, set up on its own thread.
struct rank_env {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::vector<void*> buffers;
  void* alloc(std::size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) == cudaSuccess) buffers.push_back(p);
    return p;
  }
  ~rank_env() {
    for (void* p : buffers) cudaFree(p);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

// Runs body(rank, env) for each rank on a thread of its own, bound to the rank's device with a
// stream of its own there. Results come back through the body's captures (Catch's assertions
// stay on this thread).
void on_rank_threads(const std::vector<int>& devices,
                     const std::function<void(int, rank_env&)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(devices.size()); ++r) {
    threads.emplace_back([&, r] {
      rank_env env;
      env.device = devices[static_cast<std::size_t>(r)];
      if (cudaSetDevice(env.device) != cudaSuccess ||
          cudaStreamCreate(&env.stream) != cudaSuccess) {
        return;
      }
      body(r, env);
    });
  }
  for (std::thread& t : threads) t.join();
}

// Copies host values to a fresh device buffer of the rank.
template <typename T>
void* upload(rank_env& env, const std::vector<T>& v) {
  void* p = env.alloc(v.size() * sizeof(T));
  if (p != nullptr) cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

template <typename T>
std::vector<T> download(const void* p, std::size_t n) {
  std::vector<T> v(n);
  cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return v;
}

std::vector<ncclComm_t> make_clique(const std::vector<int>& devices) {
  REQUIRE(nccl().lib != nullptr);
  std::vector<ncclComm_t> comms(devices.size());
  REQUIRE(nccl().init_all(comms.data(), static_cast<int>(devices.size()), devices.data()) ==
          ncclSuccess);
  return comms;
}

void destroy(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) CHECK(nccl().destroy(c) == ncclSuccess);
}

}  // namespace

TEST_CASE("emulated nccl: ncclCommInitAll's ranks, devices and refusals", "[emulated]") {
  const std::vector<int> devices{1, 0};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  for (int r = 0; r < 2; ++r) {
    int rank = -1, device = -1, count = 0;
    REQUIRE(nccl().user_rank(comms[static_cast<std::size_t>(r)], &rank) == ncclSuccess);
    REQUIRE(nccl().cu_device(comms[static_cast<std::size_t>(r)], &device) == ncclSuccess);
    REQUIRE(nccl().count(comms[static_cast<std::size_t>(r)], &count) == ncclSuccess);
    CHECK(rank == r);
    CHECK(device == devices[static_cast<std::size_t>(r)]);
    CHECK(count == 2);
  }
  destroy(comms);
  ncclComm_t more[2] = {};
  const int same[2] = {0, 0}, missing[2] = {0, 7};
  CHECK(nccl().init_all(more, 2, same) == ncclInvalidUsage);
  CHECK(nccl().init_all(more, 2, missing) == ncclInvalidArgument);
  CHECK(nccl().init_all(more, 0, nullptr) == ncclInvalidArgument);
  CHECK(nccl().all_reduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, nullptr, nullptr) ==
        ncclInvalidArgument);
  CHECK(std::string(nccl().error_string(ncclSuccess)) == "no error");
  CHECK(std::string(nccl().error_string(ncclInvalidUsage)).find("invalid usage") == 0);
}

TEST_CASE("emulated nccl: all-reduce sums, all-gather is rank-major, two ranks on two threads",
          "[emulated]") {
  const std::vector<int> devices{0, 1};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  constexpr std::size_t n = 6;
  std::vector<std::vector<float>> sums(2), gathered(2);
  std::vector<std::vector<float>> sent(2);
  on_rank_threads(devices, [&](int r, rank_env& env) {
    std::vector<float> x;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(static_cast<float>(i) + 100.0f * static_cast<float>(r));
    }
    sent[static_cast<std::size_t>(r)] = x;
    void* in = upload(env, x);
    void* sum = env.alloc(n * 4);
    void* all = env.alloc(2 * n * 4);
    ncclComm_t c = comms[static_cast<std::size_t>(r)];
    if (nccl().all_reduce(in, sum, n, ncclFloat32, ncclSum, c, env.stream) != ncclSuccess) return;
    if (nccl().all_gather(in, all, n, ncclFloat32, c, env.stream) != ncclSuccess) return;
    if (cudaStreamSynchronize(env.stream) != cudaSuccess) return;
    sums[static_cast<std::size_t>(r)] = download<float>(sum, n);
    gathered[static_cast<std::size_t>(r)] = download<float>(all, 2 * n);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    REQUIRE(sums[r].size() == n);
    REQUIRE(gathered[r].size() == 2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(sums[r][i] == sent[0][i] + sent[1][i]);
      CHECK(gathered[r][i] == sent[0][i]);
      CHECK(gathered[r][n + i] == sent[1][i]);
    }
  }
  destroy(comms);
}

TEST_CASE("emulated nccl: bf16 and f16 all-reduce in place, summed in f32, rounded once",
          "[emulated]") {
  const std::vector<int> devices{0, 1};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  // bf16 has 8 significant bits: 256 + 1 and 256 + 3 are ties, rounded to the even 256 and 260.
  // f16 has 11: 2048 + 1 and 2048 + 3 round to 2048 (0x6800) and 2052 (0x6802); 1 is 0x3c00,
  // 3 is 0x4200.
  const std::vector<std::uint16_t> bf[2] = {
      {gpu::f32_to_bf16(256), gpu::f32_to_bf16(256), gpu::f32_to_bf16(-1.5f)},
      {gpu::f32_to_bf16(1), gpu::f32_to_bf16(3), gpu::f32_to_bf16(0.25f)}};
  const std::vector<std::uint16_t> half[2] = {{0x6800, 0x6800}, {0x3c00, 0x4200}};
  std::vector<std::vector<std::uint16_t>> bf_out(2), half_out(2);
  on_rank_threads(devices, [&](int r, rank_env& env) {
    const auto ru = static_cast<std::size_t>(r);
    void* b = upload(env, bf[ru]);
    void* h = upload(env, half[ru]);
    ncclComm_t c = comms[ru];
    if (nccl().all_reduce(b, b, 3, ncclBfloat16, ncclSum, c, env.stream) != ncclSuccess) return;
    if (nccl().all_reduce(h, h, 2, ncclFloat16, ncclSum, c, env.stream) != ncclSuccess) return;
    if (cudaStreamSynchronize(env.stream) != cudaSuccess) return;
    bf_out[ru] = download<std::uint16_t>(b, 3);
    half_out[ru] = download<std::uint16_t>(h, 2);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(bf_out[r] == std::vector<std::uint16_t>{gpu::f32_to_bf16(256), gpu::f32_to_bf16(260),
                                                  gpu::f32_to_bf16(-1.25f)});
    CHECK(half_out[r] == std::vector<std::uint16_t>{0x6800, 0x6802});
  }
  destroy(comms);
}

TEST_CASE("emulated nccl: the k-th collectives of the ranks pair up, graph replays included",
          "[emulated]") {
  const std::vector<int> devices{0, 1};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  std::vector<std::vector<float>> out(2);
  on_rank_threads(devices, [&](int r, rank_env& env) {
    const auto ru = static_cast<std::size_t>(r);
    void* x = upload(env, std::vector<float>{1.0f + static_cast<float>(r), 10.0f});
    ncclComm_t c = comms[ru];
    // Captured once, launched twice: each launch's part pairs with the other rank's launch.
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(env.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return;
    const ncclResult_t queued = nccl().all_reduce(x, x, 2, ncclFloat32, ncclSum, c, env.stream);
    if (cudaStreamEndCapture(env.stream, &g) != cudaSuccess || queued != ncclSuccess) return;
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return;
    for (int launch = 0; launch < 2; ++launch) {
      if (cudaGraphLaunch(exec, env.stream) != cudaSuccess) return;
    }
    if (cudaStreamSynchronize(env.stream) != cudaSuccess) return;
    out[ru] = download<float>(x, 2);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    // (1 + 2) = 3, then 3 + 3 = 6; (10 + 10) = 20, then 40.
    CHECK(out[r] == std::vector<float>{6.0f, 40.0f});
  }
  destroy(comms);
}

TEST_CASE("emulated nccl: ncclCommAbort wakes a rank waiting for the others, which writes nothing",
          "[emulated]") {
  const std::vector<int> devices{0, 1};
  std::vector<ncclComm_t> comms = make_clique(devices);
  std::vector<float> result;
  bool synced = false;
  std::thread rank0([&] {
    rank_env env;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreate(&env.stream) != cudaSuccess) return;
    void* x = upload(env, std::vector<float>{5.0f, 6.0f});
    if (nccl().all_reduce(x, x, 2, ncclFloat32, ncclSum, comms[0], env.stream) != ncclSuccess)
      return;
    synced = cudaStreamSynchronize(env.stream) == cudaSuccess;  // waits for rank 1, in vain
    result = download<float>(x, 2);
  });
  // Rank 1 never calls. Whether rank 0 waits already or comes later, the abort releases it.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(nccl().abort(comms[0]) == ncclSuccess);
  CHECK(nccl().abort(comms[1]) == ncclSuccess);
  rank0.join();
  CHECK(synced);
  CHECK(result == std::vector<float>{5.0f, 6.0f});
}

// On a GPU each device runs its own queue: a rank's part arrives whether or not a host thread
// waits on its device. Here one host thread queues both ranks' parts and waits on device 1
// only; rank 0's part runs on device 0 all the same (the emulator otherwise runs queued work
// only for a waiting host thread, and rank 1 would wait for it until the timeout).
TEST_CASE("emulated nccl: a rank's part arrives with no host thread waiting on its device",
          "[emulated]") {
  const std::vector<int> devices{0, 1};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  const char* saved = std::getenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S");
  const std::string kept = saved != nullptr ? saved : "";
  setenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S", "20", 1);  // a failure ends the binary sooner
  std::vector<rank_env> env(2);
  std::vector<void*> x(2);
  for (int r = 0; r < 2; ++r) {
    rank_env& e = env[static_cast<std::size_t>(r)];
    e.device = r;
    REQUIRE(cudaSetDevice(r) == cudaSuccess);
    REQUIRE(cudaStreamCreate(&e.stream) == cudaSuccess);
    x[static_cast<std::size_t>(r)] = upload(e, std::vector<float>{1.0f + r, 10.0f * (r + 1)});
    REQUIRE(nccl().all_reduce(x[static_cast<std::size_t>(r)], x[static_cast<std::size_t>(r)], 2,
                              ncclFloat32, ncclSum, comms[static_cast<std::size_t>(r)],
                              e.stream) == ncclSuccess);
  }
  CHECK(cudaStreamSynchronize(env[1].stream) == cudaSuccess);  // device 1 only
  CHECK(cudaStreamQuery(env[0].stream) == cudaSuccess);  // device 0 ran its part by itself
  CHECK(download<float>(x[1], 2) == std::vector<float>{3.0f, 30.0f});
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(download<float>(x[0], 2) == std::vector<float>{3.0f, 30.0f});
  if (saved != nullptr) {
    setenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S", kept.c_str(), 1);
  } else {
    unsetenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S");
  }
  for (int r = 1; r >= 0; --r) {  // each rank's buffers and stream freed on its device
    REQUIRE(cudaSetDevice(r) == cudaSuccess);
    env.pop_back();
  }
  destroy(comms);
}

// NCCL's argument check (CudaPtrCheck: cudaPointerGetAttributes): each buffer in device memory
// of the communicator's device, else ncclInvalidArgument.
TEST_CASE("emulated nccl: a collective's buffers are the rank's device memory", "[emulated]") {
  const std::vector<int> devices{0, 1};
  const std::vector<ncclComm_t> comms = make_clique(devices);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  rank_env one;
  one.device = 1;
  void* on_1 = one.alloc(64);
  REQUIRE(on_1 != nullptr);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  rank_env zero;
  void* on_0 = zero.alloc(64);
  REQUIRE(on_0 != nullptr);
  std::vector<float> host(16);
  CHECK(nccl().all_reduce(host.data(), on_0, 4, ncclFloat32, ncclSum, comms[0], nullptr) ==
        ncclInvalidArgument);
  CHECK(nccl().all_reduce(on_0, on_1, 4, ncclFloat32, ncclSum, comms[0], nullptr) ==
        ncclInvalidArgument);  // rank 0's device is 0
  CHECK(nccl().all_gather(on_1, on_0, 4, ncclFloat32, comms[0], nullptr) ==
        ncclInvalidArgument);
  CHECK(cudaGetLastError() == cudaSuccess);  // NCCL's refusal is no CUDA error
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  one = rank_env{};  // freed on device 1
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  destroy(comms);
}

// A graph replays its captured collective long after the call; a GPU faults on a buffer freed
// since: the device's sticky cudaErrorIllegalAddress, and no rank waits for the part (the
// clique is aborted). In a child process: the sticky error stays with the device.
TEST_CASE("emulated nccl: a replayed collective whose buffer was freed faults its device",
          "[emulated]") {
  REQUIRE(nccl().lib != nullptr);
  const child_end end = in_child([] {
    setenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S", "5", 1);
    ncclComm_t comms[2] = {};
    const int devs[2] = {0, 1};
    float *x0 = nullptr, *x1 = nullptr;
    cudaStream_t s0 = nullptr, s1 = nullptr;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (nccl().init_all(comms, 2, devs) != ncclSuccess || cudaSetDevice(1) != cudaSuccess ||
        cudaStreamCreate(&s1) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&x1), 8) != cudaSuccess ||
        cudaSetDevice(0) != cudaSuccess || cudaStreamCreate(&s0) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&x0), 8) != cudaSuccess ||
        cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal) != cudaSuccess ||
        nccl().all_reduce(x0, x0, 2, ncclFloat32, ncclSum, comms[0], s0) != ncclSuccess ||
        cudaStreamEndCapture(s0, &g) != cudaSuccess ||
        cudaGraphInstantiate(&exec, g, 0) != cudaSuccess || cudaFree(x0) != cudaSuccess ||
        cudaGraphLaunch(exec, s0) != cudaSuccess || cudaSetDevice(1) != cudaSuccess ||
        nccl().all_reduce(x1, x1, 2, ncclFloat32, ncclSum, comms[1], s1) != ncclSuccess) {
      _exit(3);
    }
    if (cudaStreamSynchronize(s1) != cudaSuccess) _exit(4);  // rank 1 is not left waiting
    // Every call made on the faulted device returns its sticky error, cudaSetDevice's too.
    _exit(cudaSetDevice(0) == cudaErrorIllegalAddress ? 0 : 5);
  });
  INFO(end.err);
  CHECK(WIFEXITED(end.status));
  CHECK(WEXITSTATUS(end.status) == 0);
  CHECK(end.err.find("emulated NCCL all-reduce on device 0") != std::string::npos);
  CHECK(end.err.find("cudaErrorIllegalAddress") != std::string::npos);
}

TEST_CASE("emulated nccl: a rank whose peers never arrive gives up after the timeout",
          "[emulated]") {
  REQUIRE(nccl().lib != nullptr);
  const child_end end = in_child([] {  // rank 0 alone, a 1 s timeout
    setenv("COURIER_CUDA_EMU_NCCL_TIMEOUT_S", "1", 1);
    ncclComm_t comms[2] = {};
    const int devs[2] = {0, 1};
    float* x = nullptr;
    cudaStream_t s = nullptr;
    if (nccl().init_all(comms, 2, devs) != ncclSuccess || cudaStreamCreate(&s) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&x), 8) != cudaSuccess ||
        nccl().all_reduce(x, x, 2, ncclFloat32, ncclSum, comms[0], s) != ncclSuccess) {
      _exit(3);
    }
    cudaStreamSynchronize(s);
    _exit(4);  // not reached: the wait aborts the process
  });
  CHECK(WIFSIGNALED(end.status));
  CHECK(end.err.find("never arrived") != std::string::npos);
}

}  // namespace courier_test_gpu_cuda_emulated_nccl_emu
