#include "tests/support/cuda_backend.hpp"

namespace courier::test {

bool cuda_emulated() { return true; }

}  // namespace courier::test
