#include "tests/support/cuda_backend.hpp"

namespace courier::test {

bool cuda_emulated() { return false; }

}  // namespace courier::test
