#include "actors/runtime/worker_priority.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace courier::actors {

namespace {

id_t this_thread_id() { return static_cast<id_t>(syscall(SYS_gettid)); }

}  // namespace

void worker_priority_hook::thread_started() {
  char name[16] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return;
  if (std::strcmp(name, "caf.multiplexer") != 0) return;
  lower_current_thread_priority(nice_);
}

void lower_current_thread_priority(int by) {
  if (by <= 0) return;
  (void)setpriority(PRIO_PROCESS, this_thread_id(), std::min(current_thread_nice() + by, 19));
}

bool run_current_thread_when_idle() {
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0;
}

int current_thread_nice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, this_thread_id());
}

}  // namespace courier::actors
