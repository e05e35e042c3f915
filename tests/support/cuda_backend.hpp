#pragma once
// Which CUDA backend this test binary links: NVIDIA's (courier_tests, compiled where nvcc is;
// on a GPU machine) or the emulator's (courier_emulated_integration_tests). Each binary defines
// it in a file of its own (cuda_backend_native.cpp, cuda_backend_emulated.cpp), so that the
// integration files shared by both are compiled once (tests/CMakeLists.txt).
namespace courier::test {

bool cuda_emulated();

}  // namespace courier::test
