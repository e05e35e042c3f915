// A layering violation for tests/CMakeLists.txt: admission reaches into the scheduler.
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "messages/step.hpp"
