#pragma once
// What the fuzz targets share: the test data folder, reading a file, and reporting a finding.
// A finding aborts the process, so libFuzzer saves the input that caused it as a reproducer.
#include <cxxabi.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

namespace courier::fuzz {

// tests/data, compiled in (COURIER_TEST_DATA), so a target runs from any directory.
inline std::string data_path(const std::string& relative) {
  return std::string(COURIER_TEST_DATA) + "/" + relative;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Ends the run with a report libFuzzer records as a crash (the input is saved as crash-<sha1>).
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "==courier-fuzz== FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// The dynamic type of the exception in flight, demangled ("nlohmann::...::type_error").
inline std::string current_exception_type() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  if (t == nullptr) return "(none)";
  int status = 0;
  char* name = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : t->name();
  std::free(name);
  return out;
}

// For a catch (...) after the documented exception types: an undocumented exception escaped.
[[noreturn]] inline void undocumented_exception(const char* where) {
  std::string what;
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "(not a std::exception)";
  }
  finding(std::string(where) + " threw " + current_exception_type() + ": " + what);
}

// The stack inputs run on: a CAF worker has 8 MiB, but the bodies that would overflow it
// with a recursion that lacks a depth bound are hundreds of KB, more than a fuzzer grows an
// input to in minutes. On 2 MiB an input of the fuzzer's 16 KB shows the same bug (thousands
// of levels), while the bounded recursion of the real work fits: the grammar compiler's
// deepest, inlining 400 levels (2 x max_nesting), takes about 1.1 MB under ASan at -O1.
inline constexpr rlim_t stack_bytes = rlim_t{2} << 20;

// Caps the main thread's stack at `stack_bytes` (the kernel checks the limit as the stack
// grows, so lowering it at run time works). The inputs run on the main thread, where
// libFuzzer's stack-depth feature sees how deep they went and so steers towards deeper ones.
inline void limit_stack() {
  rlimit limit{};
  getrlimit(RLIMIT_STACK, &limit);
  limit.rlim_cur = stack_bytes;
  if (setrlimit(RLIMIT_STACK, &limit) != 0) finding("cannot lower the stack limit");
}

}  // namespace courier::fuzz
