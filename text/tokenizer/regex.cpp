#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/tokenizer/regex.hpp"

#include <pcre2.h>

#include <memory>
#include <string>

#include "text/tokenizer/tokenizer_error.hpp"
#include "text/tokenizer/utf8.hpp"

namespace courier::text {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

// Per-thread match scratch. One ovector pair is enough: only the whole match is read (PCRE2
// still fills pair 0 when a pattern has more groups). The JIT stack is larger than PCRE2's
// 32 KiB default so that long inputs cannot exhaust it.
struct scratch {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  scratch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~scratch() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

scratch& thread_scratch() {
  thread_local scratch s;
  return s;
}

}  // namespace

regex::regex(std::string_view pattern, bool literal) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2 rejects UCP together with LITERAL (it has no classes to apply it to).
  const std::uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &error, &offset, nullptr);
  if (code == nullptr) {
    throw tokenizer_error("invalid regex at offset " + std::to_string(offset) + ": " +
                          pcre2_message(error));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

regex::regex(regex&& other) noexcept : code_(other.code_), jit_(other.jit_) {
  other.code_ = nullptr;
}

regex& regex::operator=(regex&& other) noexcept {
  if (this != &other) {
    pcre2_code_free(static_cast<pcre2_code*>(code_));
    code_ = other.code_;
    jit_ = other.jit_;
    other.code_ = nullptr;
  }
  return *this;
}

regex::~regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

void regex::find_all(std::string_view text, std::vector<match_span>& out) const {
  out.clear();
  scratch& s = thread_scratch();
  const auto* code = static_cast<const pcre2_code*>(code_);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), pos, 0, s.data, s.context)
                  : PCRE2_ERROR_JIT_STACKLIMIT;
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
      // No JIT, or its stack ran out: the interpreter keeps its frames on the heap.
      rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, s.data, s.context);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      // Only a resource limit can get here (the subject is valid UTF-8). Leave the rest of the
      // text unmatched rather than fail an encode: the result still round-trips.
      return;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.data);
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      pos = ov[1];
    } else if (ov[0] >= text.size()) {
      return;
    } else {
      pos = ov[0] + utf8::sequence_length(static_cast<unsigned char>(text[ov[0]]));
    }
  }
}

}  // namespace courier::text
