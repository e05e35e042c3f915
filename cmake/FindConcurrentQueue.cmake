# FindConcurrentQueue.cmake -- moodycamel's ConcurrentQueue (Debian: libconcurrentqueue-dev) is
# header-only and ships no CMake package config or .pc file. This module finds its header and
# makes the imported target ConcurrentQueue::ConcurrentQueue (an interface target: the include
# folder), so a missing package stops the configure, naming it, instead of a compile error.
#
#   find_package(ConcurrentQueue REQUIRED)
#   target_link_libraries(lib PRIVATE ConcurrentQueue::ConcurrentQueue)
#   #include <concurrentqueue/concurrentqueue.h>

find_path(ConcurrentQueue_INCLUDE_DIR NAMES concurrentqueue/concurrentqueue.h)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ConcurrentQueue REQUIRED_VARS ConcurrentQueue_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "install Debian's libconcurrentqueue-dev (scripts/install-deps.sh)")

if(ConcurrentQueue_FOUND AND NOT TARGET ConcurrentQueue::ConcurrentQueue)
  add_library(ConcurrentQueue::ConcurrentQueue INTERFACE IMPORTED)
  set_target_properties(ConcurrentQueue::ConcurrentQueue PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ConcurrentQueue_INCLUDE_DIR}")
endif()
mark_as_advanced(ConcurrentQueue_INCLUDE_DIR)
