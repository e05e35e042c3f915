#include "gpu/cuda_emu/block_runner.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <memory>
#include <new>
#include <numeric>
#include <vector>

#include <sys/mman.h>

#include "gpu/cuda_emu/asan.hpp"
#include "gpu/cuda_emu/fiber_switch.hpp"


namespace courier::cuda_emu {

namespace {

// A thread's stack: kernels keep small arrays in registers and local memory, never megabytes.
constexpr std::size_t stack_bytes = 64 * 1024;
// Thread i's stack starts i cache lines further than a 64 KB stride would put it. At the plain
// stride every thread's frames would fall in the same few cache sets (a set's index repeats
// every 4 KB in L1 and every 64 KB or so in L2), and each switch would miss; coloured, 1024
// threads' frames spread over 1024 sets.
constexpr std::size_t stack_stride = stack_bytes + 64;
constexpr std::size_t huge_page = 2 * 1024 * 1024;

struct unmap {
  std::size_t bytes;
  void operator()(char* p) const { munmap(p, bytes); }
};

// The emulated threads' stacks for a launch from this host thread: kept from one launch to the
// next (a launch of 1024 threads takes 64 MB, which allocated afresh each time the kernel
// maps, faults in and unmaps again), grown when a launch needs more; in huge pages where the
// kernel gives them (a switch to each of 1024 stacks would otherwise miss the TLB). Under ASan
// a failed block's abandoned frames leave their poison behind, so the stacks are unpoisoned
// for reuse.
char* launch_stacks(std::size_t threads) {
  thread_local std::unique_ptr<char, unmap> stacks(nullptr, unmap{0});
  const std::size_t bytes = (threads * stack_stride + huge_page - 1) / huge_page * huge_page;
  if (bytes > stacks.get_deleter().bytes) {
    stacks.reset();
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice: without it, ordinary pages
#endif
    stacks = std::unique_ptr<char, unmap>(static_cast<char*>(p), unmap{bytes});
  }
#ifdef COURIER_EMU_ASAN
  __asan_unpoison_memory_region(stacks.get(), stacks.get_deleter().bytes);
#endif
  return stacks.get();
}

// The turns' randomness, seeded by the launch: splitmix64, and Fisher-Yates with a
// multiply-shift bound (its bias, under 2^-53 for any block, is no order a kernel could lean
// on). A round of 1024 threads draws 1023 numbers; mt19937_64 with std::shuffle's
// uniform_int_distribution cost more than the rest of the round's bookkeeping.
class order_rng {
 public:
  explicit order_rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      __extension__ using wide = unsigned __int128;
      const auto j = static_cast<std::size_t>((static_cast<wide>(next()) * i) >> 64);
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::uint64_t state_;
};

enum class state { running, at_barrier, at_collective, done };

// What a lane brings to a warp collective.
enum class op { syncwarp, ballot, any, all, shuffle, instruction };
struct collective {
  op what = op::syncwarp;
  detail::warp_fn fn = nullptr;  // op::instruction's
  const char* name = "";
  detail::lane_words in, out;    // op::instruction's operands and results
  detail::shuffle kind = detail::shuffle::index;
  unsigned mask = 0;
  std::uint64_t bits = 0;  // the value, or the predicate
  int operand = 0;
  int width = warp_size;
  std::uint64_t result = 0;
};

struct async_copy {
  void* dst;
  const void* src;
};

struct fiber {
  detail::fiber_context context;
  std::vector<async_copy> copies;        // cp.async's not yet landed, oldest first
  std::vector<std::size_t> group_ends;   // committed groups: where each ends in `copies`
  state now = state::running;
  collective c;
  dim3 tid;
  int lane = 0;
  char* stack = nullptr;
  void* fake_stack = nullptr;  // ASan's, while switched away
};

struct block {
  const std::function<void()>* body = nullptr;
  dim3 idx, dim, grid;
  std::vector<fiber> fibers;
  std::vector<unsigned char> shared;
  detail::fiber_context scheduler;
  std::size_t current = 0;
  std::exception_ptr error;
  const void* scheduler_stack = nullptr;  // for ASan's fiber switches
  std::size_t scheduler_stack_size = 0;
};

// Read at every threadIdx, shuffle and barrier. Initial-exec: the runtime's library is loaded
// with the program, never opened later, so its thread-locals need no __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) thread_local block* active = nullptr;

block& in_kernel(const char* what) {
  if (active == nullptr) throw emu_error(std::string(what) + " outside a kernel");
  return *active;
}

fiber& self(const char* what) {
  block& b = in_kernel(what);
  return b.fibers[b.current];
}

// From a thread back to the scheduler; `finished`: never to be resumed.
void to_scheduler(block& b, fiber& f, bool finished) {
#ifdef COURIER_EMU_ASAN
  __sanitizer_start_switch_fiber(finished ? nullptr : &f.fake_stack, b.scheduler_stack,
                                 b.scheduler_stack_size);
#else
  (void)finished;
#endif
  detail::fiber_switch(f.context, b.scheduler);
#ifdef COURIER_EMU_ASAN
  __sanitizer_finish_switch_fiber(f.fake_stack, nullptr, nullptr);
#endif
}

void entered(block& b) {
#ifdef COURIER_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b.scheduler_stack, &b.scheduler_stack_size);
#else
  (void)b;
#endif
}

[[noreturn]] void fail(const block& b, const std::string& what);

void thread_main() {
  block& b = *active;
  entered(b);
  fiber& f = b.fibers[b.current];
  try {
    (*b.body)();
    if (!f.copies.empty()) {
      fail(b, "thread (" + std::to_string(f.tid.x) + "," + std::to_string(f.tid.y) + "," +
                  std::to_string(f.tid.z) + ") ended with " + std::to_string(f.copies.size()) +
                  " cp.async copies never waited for");
    }
  } catch (...) {
    if (!b.error) b.error = std::current_exception();
  }
  f.now = state::done;
  to_scheduler(b, f, true);
}

// From the scheduler into thread i, until it waits or ends.
void resume(block& b, std::size_t i) {
  b.current = i;
  fiber& f = b.fibers[i];
#ifdef COURIER_EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, stack_bytes);
  detail::fiber_switch(b.scheduler, f.context);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  detail::fiber_switch(b.scheduler, f.context);
#endif
}

// A thread waits (at a barrier or a collective) until the scheduler lets it go on.
void wait_here(state s) {
  block& b = *active;
  fiber& f = b.fibers[b.current];
  f.now = s;
  to_scheduler(b, f, false);
}

std::string lanes_of(unsigned mask) {
  std::string out;
  for (int l = 0; l < warp_size; ++l) {
    if (mask & (1u << l)) out += (out.empty() ? "" : ",") + std::to_string(l);
  }
  return out;
}

[[noreturn]] void fail(const block& b, const std::string& what) {
  throw emu_error("block (" + std::to_string(b.idx.x) + "," + std::to_string(b.idx.y) + "," +
                  std::to_string(b.idx.z) + "): " + what);
}

// The source lane of lane `l`'s shuffle, or `l` itself where the Guide gives the caller its own
// value.
int shuffle_source(const collective& c, int l) {
  const int start = (l / c.width) * c.width;
  switch (c.kind) {
    case detail::shuffle::index:
      return start + ((c.operand % c.width) + c.width) % c.width;
    case detail::shuffle::up:
      return l - start < c.operand ? l : l - c.operand;
    case detail::shuffle::down:
      return l - start + c.operand >= c.width ? l : l + c.operand;
    case detail::shuffle::bfly: {
      const int src = l ^ c.operand;
      return src >= start + c.width ? l : src;  // a later segment: its own value
    }
  }
  return l;
}

// Completes the collective that lane `first`'s mask names, if every lane of it waits there.
// True when it did.
bool complete_group(block& b, std::size_t warp_begin, std::size_t warp_end, std::size_t first) {
  const collective& lead = b.fibers[first].c;
  std::array<fiber*, warp_size> lanes{};
  for (std::size_t i = warp_begin; i < warp_end; ++i) lanes[b.fibers[i].lane] = &b.fibers[i];
  for (int l = 0; l < warp_size; ++l) {
    if (!(lead.mask & (1u << l))) continue;
    const fiber& f = *lanes[l];
    if (f.now == state::done) {
      fail(b, "a warp collective's mask names lane " + std::to_string(l) +
                  ", which exited without joining it (a hang on hardware)");
    }
    if (f.now != state::at_collective) return false;  // at __syncthreads: a deadlock, below
    if (f.c.mask != lead.mask || f.c.what != lead.what ||
        (lead.what == op::shuffle && f.c.kind != lead.kind) ||
        (lead.what == op::instruction && f.c.fn != lead.fn)) {
      fail(b, "lanes " + lanes_of(lead.mask) + " meet at different warp collectives or masks "
              "(undefined)");
    }
  }
  if (lead.what == op::instruction) {
    detail::lane_words in[warp_size], out[warp_size];
    for (int l = 0; l < warp_size; ++l) in[l] = lanes[l]->c.in;
    lead.fn(in, out);
    for (int l = 0; l < warp_size; ++l) {
      lanes[l]->c.out = out[l];
      lanes[l]->now = state::running;
    }
    return true;
  }
  std::uint64_t votes = 0;
  for (int l = 0; l < warp_size; ++l) {
    if ((lead.mask & (1u << l)) && lanes[l]->c.bits != 0) votes |= 1ull << l;
  }
  for (int l = 0; l < warp_size; ++l) {
    if (!(lead.mask & (1u << l))) continue;
    collective& c = lanes[l]->c;
    switch (c.what) {
      case op::syncwarp:
      case op::instruction:  // completed above
        break;
      case op::ballot: c.result = votes; break;
      case op::any: c.result = votes != 0; break;
      case op::all: c.result = votes == lead.mask; break;
      case op::shuffle: {
        const int src = shuffle_source(c, l);
        if (!(lead.mask & (1u << src))) {
          fail(b, "lane " + std::to_string(l) + " shuffles from lane " + std::to_string(src) +
                      ", which is not in the mask " + lanes_of(lead.mask) + " (undefined)");
        }
        c.result = lanes[src]->c.bits;
        break;
      }
    }
    lanes[l]->now = state::running;
  }
  return true;
}

// Completes what the waiting threads can complete; false when nothing could (a deadlock).
bool release_waiters(block& b) {
  bool released = false;
  for (std::size_t w = 0; w < b.fibers.size(); w += warp_size) {
    const std::size_t end = std::min(b.fibers.size(), w + warp_size);
    for (std::size_t i = w; i < end; ++i) {
      if (b.fibers[i].now == state::at_collective && complete_group(b, w, end, i)) released = true;
    }
  }
  if (released) return true;
  std::size_t at_barrier = 0, done = 0;
  for (const fiber& f : b.fibers) {
    at_barrier += f.now == state::at_barrier;
    done += f.now == state::done;
  }
  if (at_barrier == 0) return false;
  if (at_barrier + done < b.fibers.size()) return false;  // some wait at a collective
  if (done > 0) {
    fail(b, "__syncthreads: " + std::to_string(done) + " of the block's " +
                std::to_string(b.fibers.size()) +
                " threads exited without reaching it (a hang on hardware)");
  }
  for (fiber& f : b.fibers) f.now = state::running;
  return true;
}

std::string describe_deadlock(const block& b) {
  std::size_t barrier = 0, collective = 0, done = 0;
  for (const fiber& f : b.fibers) {
    barrier += f.now == state::at_barrier;
    collective += f.now == state::at_collective;
    done += f.now == state::done;
  }
  return "no thread can go on: " + std::to_string(barrier) + " wait at __syncthreads, " +
         std::to_string(collective) + " at a warp collective, " + std::to_string(done) +
         " exited (a hang on hardware)";
}

// A fresh start for thread `f` of `b`.
void prepare(fiber& f) {
  f.now = state::running;
  f.copies.clear();
  f.group_ends.clear();
  detail::fiber_make(f.context, f.stack, stack_bytes, thread_main);
}

void run_block(block& b, order_rng& rng) {
  std::vector<std::size_t> order(b.fibers.size());
  std::iota(order.begin(), order.end(), 0);
  for (fiber& f : b.fibers) prepare(f);
  for (;;) {
    rng.shuffle(order);  // the threads' turns in a random order
    for (const std::size_t i : order) {
      if (b.fibers[i].now != state::running) continue;
      resume(b, i);
      if (b.error) std::rethrow_exception(b.error);
    }
    if (std::all_of(b.fibers.begin(), b.fibers.end(),
                    [](const fiber& f) { return f.now == state::done; })) {
      return;
    }
    if (!release_waiters(b)) fail(b, describe_deadlock(b));
  }
}

void check_config_of(const launch_config& c) {
  const auto bad = [](const std::string& why) {
    throw emu_error("invalid configuration argument (cudaErrorInvalidConfiguration): " + why);
  };
  const dim3& t = c.block;
  const dim3& g = c.grid;
  if (t.x == 0 || t.y == 0 || t.z == 0 || g.x == 0 || g.y == 0 || g.z == 0) bad("a zero dimension");
  if (t.x > 1024 || t.y > 1024 || t.z > 64) bad("a block dimension over (1024, 1024, 64)");
  if (std::uint64_t{t.x} * t.y * t.z > 1024) bad("more than 1024 threads a block");
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
    bad("a grid dimension over (2^31 - 1, 65535, 65535)");
  }
}

}  // namespace

void run_grid(const launch_config& config, const std::function<void()>& body) {
  check_config_of(config);
  if (active != nullptr) throw emu_error("a kernel launched from inside a kernel");
  const std::size_t threads =
      std::size_t{config.block.x} * config.block.y * config.block.z;
  char* const stacks = launch_stacks(threads);
  block b;
  b.body = &body;
  b.dim = config.block;
  b.grid = config.grid;
  b.fibers.resize(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    fiber& f = b.fibers[i];
    f.stack = stacks + i * stack_stride;
    f.tid = {static_cast<unsigned>(i % config.block.x),
             static_cast<unsigned>(i / config.block.x % config.block.y),
             static_cast<unsigned>(i / (std::size_t{config.block.x} * config.block.y))};
    f.lane = static_cast<int>(i % warp_size);
  }
  std::vector<dim3> blocks;
  for (unsigned z = 0; z < config.grid.z; ++z) {
    for (unsigned y = 0; y < config.grid.y; ++y) {
      for (unsigned x = 0; x < config.grid.x; ++x) blocks.push_back({x, y, z});
    }
  }
  order_rng rng(config.seed);
  rng.shuffle(blocks);  // blocks run in no order the code may assume
  struct deactivate {
    ~deactivate() { active = nullptr; }
  } guard;
  for (const dim3& idx : blocks) {
    b.idx = idx;
    b.shared.assign(config.shared_bytes, 0xCD);
    active = &b;
    run_block(b, rng);
  }
}

void check_launch_config(const launch_config& config) { check_config_of(config); }

const dim3& thread_idx() { return self("threadIdx").tid; }
const dim3& block_idx() { return in_kernel("blockIdx").idx; }
const dim3& block_dim() { return in_kernel("blockDim").dim; }
const dim3& grid_dim() { return in_kernel("gridDim").grid; }
int lane_id() { return self("the lane id").lane; }

void* dynamic_shared() {
  block& b = in_kernel("dynamic shared memory");
  return b.shared.data();
}

void cp_async_16(void* dst, const void* src) {
  fiber& f = self("cp.async");
  if (reinterpret_cast<std::uintptr_t>(dst) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(src) % 16 != 0) {
    fail(*active, "cp.async of 16 bytes with an address not 16-byte aligned (undefined)");
  }
  f.copies.push_back({dst, src});
}

void cp_async_commit() {
  fiber& f = self("cp.async.commit_group");
  f.group_ends.push_back(f.copies.size());
}

void cp_async_wait(int most_recent_left) {
  fiber& f = self("cp.async.wait_group");
  const auto keep = static_cast<std::size_t>(std::max(most_recent_left, 0));
  if (f.group_ends.size() <= keep) return;
  const std::size_t landed = f.group_ends[f.group_ends.size() - keep - 1];
  for (std::size_t i = 0; i < landed; ++i) std::memcpy(f.copies[i].dst, f.copies[i].src, 16);
  f.copies.erase(f.copies.begin(), f.copies.begin() + static_cast<std::ptrdiff_t>(landed));
  f.group_ends.erase(f.group_ends.begin(),
                     f.group_ends.end() - static_cast<std::ptrdiff_t>(keep));
  for (std::size_t& end : f.group_ends) end -= landed;
}

void syncthreads() {
  self("__syncthreads");
  wait_here(state::at_barrier);
}

namespace {

// The calling lane's collective (`f.c`, filled in by the caller): checked, waited for, and its
// result. In place: a collective is ~180 bytes, and kernels make millions of them.
std::uint64_t join(fiber& f, const char* name) {
  block& b = *active;
  const collective& c = f.c;
  if (!(c.mask & (1u << f.lane))) {
    fail(b, std::string(name) + ": lane " + std::to_string(f.lane) + " calls it with a mask (" +
                lanes_of(c.mask) + ") without itself");
  }
  const std::size_t warp_begin = b.current / warp_size * warp_size;
  const std::size_t lanes_here = std::min<std::size_t>(warp_size, b.fibers.size() - warp_begin);
  if (lanes_here < warp_size && (c.mask >> lanes_here) != 0) {
    fail(b, std::string(name) + ": the mask " + lanes_of(c.mask) + " names lanes this warp of " +
                std::to_string(lanes_here) + " threads does not have");
  }
  wait_here(state::at_collective);
  return f.c.result;
}

}  // namespace

detail::lane_words detail::warp_instruction(const char* name, warp_fn fn, const lane_words& in) {
  fiber& f = self(name);
  collective& c = f.c;
  c.what = op::instruction;
  c.mask = 0xffffffffu;
  c.fn = fn;
  c.name = name;
  c.in = in;
  join(f, name);
  return f.c.out;
}

namespace {

// A collective that carries one predicate (or none) from each lane.
std::uint64_t vote(op what, unsigned mask, int predicate, const char* name) {
  fiber& f = self(name);
  collective& c = f.c;
  c.what = what;
  c.mask = mask;
  c.bits = predicate != 0;
  return join(f, name);
}

}  // namespace

void syncwarp(unsigned mask) { vote(op::syncwarp, mask, 0, "__syncwarp"); }

unsigned ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(vote(op::ballot, mask, predicate, "__ballot_sync"));
}

int any_sync(unsigned mask, int predicate) {
  return static_cast<int>(vote(op::any, mask, predicate, "__any_sync"));
}

int all_sync(unsigned mask, int predicate) {
  return static_cast<int>(vote(op::all, mask, predicate, "__all_sync"));
}

std::uint64_t detail::shuffle_bits(shuffle kind, unsigned mask, std::uint64_t bits, int operand,
                                   int width) {
  if (width < 1 || width > warp_size || (width & (width - 1)) != 0) {
    fail(in_kernel("a warp shuffle"), "a shuffle's width " + std::to_string(width) +
                                          " is not a power of two in [1, 32] (undefined)");
  }
  fiber& f = self("__shfl_sync");
  collective& c = f.c;
  c.what = op::shuffle;
  c.kind = kind;
  c.mask = mask;
  c.bits = bits;
  c.operand = operand;
  c.width = width;
  return join(f, "__shfl_sync");
}

}  // namespace courier::cuda_emu
