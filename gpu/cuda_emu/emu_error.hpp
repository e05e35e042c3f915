#pragma once
// What the emulator refuses: what the hardware or the runtime would refuse, hang on or leave
// undefined, named.
#include <stdexcept>

namespace courier::cuda_emu {

class emu_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace courier::cuda_emu
