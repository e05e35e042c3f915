// A layering violation for tests/CMakeLists.txt: the model includes a backend.
#include "gpu/device.hpp"
#include "gpu/sim/sim_device.hpp"
