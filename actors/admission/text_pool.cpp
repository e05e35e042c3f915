#include "actors/admission/text_pool.hpp"

#include <algorithm>
#include <thread>

namespace courier::admission {

int text_pool_threads(int configured) {
  if (configured > 0) return configured;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 4);
}

}  // namespace courier::admission
