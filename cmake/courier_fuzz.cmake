# COURIER_FUZZ=ON: a build for the libFuzzer targets of tests/fuzz (scripts/fuzz.sh configures
# it in build-fuzz). Every library is compiled with libFuzzer's coverage instrumentation and
# AddressSanitizer + UBSan (-fsanitize=fuzzer-no-link,...); only the fuzz targets link
# libFuzzer's main (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt). Not for the normal build:
# libFuzzer comes with clang only (Debian: clang, libclang-rt-14-dev).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "COURIER_FUZZ=ON needs clang (libFuzzer ships with it): configure with "
                      "-DCMAKE_CXX_COMPILER=clang++, as scripts/fuzz.sh does")
endif()
if(COURIER_SANITIZE)
  message(FATAL_ERROR "COURIER_FUZZ=ON already builds with ASan and UBSan: drop COURIER_SANITIZE")
endif()
# UB aborts (-fno-sanitize-recover), so libFuzzer saves the input as a reproducer.
add_compile_options("$<${cxx}:-fsanitize=fuzzer-no-link,address,undefined;-fno-sanitize-recover=undefined;-fno-omit-frame-pointer>")
add_link_options(-fsanitize=address,undefined)
# -O1, as the sanitizer build: about half the compile CPU of -O2 under the sanitizers.
add_compile_options("$<$<AND:${cxx},$<CONFIG:RelWithDebInfo>>:-O1>")
