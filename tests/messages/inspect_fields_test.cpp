// Every message's inspect() lists every field. CAF serializes what inspect lists, so a field
// left out never crosses the cluster wire (a replica or a front end gets its default, silently)
// and is missing from logs. The fields of each message struct (an aggregate: counted by brace
// initialization, independently of inspect) must equal the values its inspect passes.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <utility>

#include "messages/type_ids.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_messages_inspect_fields {

using namespace courier;

namespace {

// Converts to any member type: T{field_value x N} compiles exactly when T has at least N
// fields. An array member takes one per element (brace elision), as inspect lists each element.
struct field_value {
  template <class T>
  operator T() const;  // unevaluated only
};

#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-braces"  // the elision above is the point
#endif
template <class T, class... A>
constexpr auto braces_take(int) -> decltype(T{std::declval<A>()...}, true) {
  return true;
}
template <class T, class... A>
constexpr bool braces_take(...) {
  return false;
}
#ifdef __clang__
#pragma clang diagnostic pop
#endif

template <class T, class... A>
constexpr std::size_t field_count() {
  if constexpr (braces_take<T, A..., field_value>(0)) {
    return field_count<T, A..., field_value>();
  } else {
    return sizeof...(A);
  }
}

// Counts the values an inspect passes, annotations (its type name) aside.
struct counting_inspector {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;
  std::size_t values = 0;

  template <class... Ts>
  void operator()(Ts&&... xs) {
    (count(xs), ...);
  }
  template <class T>
  void count(const T&) {
    if constexpr (!caf::meta::is_annotation<T>::value) ++values;
  }
};

template <class T>
std::size_t inspected_values() {
  T x{};
  counting_inspector f;
  inspect(f, x);
  return f.values;
}

// `local`: fields that stay in this process on purpose, each named where it is checked.
template <class T>
void check(const char* name, std::size_t local = 0) {
  INFO(name);
  static_assert(std::is_aggregate_v<T>, "a message is a plain struct");
  CHECK(inspected_values<T>() + local == field_count<T>());
}

}  // namespace

TEST_CASE("messages: every inspect lists every field of its struct", "[messages]") {
#define COURIER_CHECK_FIELDS(T) check<msg::T>(#T)
  COURIER_CHECK_FIELDS(cache_event_msg);
  COURIER_CHECK_FIELDS(cache_update);
  COURIER_CHECK_FIELDS(watch_cache);
  COURIER_CHECK_FIELDS(replica_update);
  COURIER_CHECK_FIELDS(replica_back);
  COURIER_CHECK_FIELDS(disk_op);
  COURIER_CHECK_FIELDS(disk_batch);
  COURIER_CHECK_FIELDS(disk_done);
  COURIER_CHECK_FIELDS(disk_deadline);
  // The compiled masks and the GBNF text they came from are this process's: the text crosses
  // as wire_gbnf, which the receiving replica compiles.
  check<msg::output_grammar>("output_grammar", 2);
  COURIER_CHECK_FIELDS(sampling_params);
  COURIER_CHECK_FIELDS(submit);
  COURIER_CHECK_FIELDS(submit_batch);
  COURIER_CHECK_FIELDS(submit_ack);
  COURIER_CHECK_FIELDS(cancel);
  COURIER_CHECK_FIELDS(token_logprob);
  COURIER_CHECK_FIELDS(usage);
  COURIER_CHECK_FIELDS(token_event);
  COURIER_CHECK_FIELDS(penalty_entry);
  COURIER_CHECK_FIELDS(sequence_start);
  COURIER_CHECK_FIELDS(plan_row);
  COURIER_CHECK_FIELDS(state_copy);
  COURIER_CHECK_FIELDS(block_copy);
  COURIER_CHECK_FIELDS(lora_load);
  COURIER_CHECK_FIELDS(step_plan);
  COURIER_CHECK_FIELDS(copies_wait);
  COURIER_CHECK_FIELDS(copies_done);
  COURIER_CHECK_FIELDS(lora_change);
  COURIER_CHECK_FIELDS(lora_ack);
  COURIER_CHECK_FIELDS(row_result);
  COURIER_CHECK_FIELDS(step_result);
  COURIER_CHECK_FIELDS(engine_ready);
  COURIER_CHECK_FIELDS(scheduler_stats);
  COURIER_CHECK_FIELDS(step_summary);
  COURIER_CHECK_FIELDS(request_summary);
  COURIER_CHECK_FIELDS(telemetry_report);
  COURIER_CHECK_FIELDS(admission_report);
#undef COURIER_CHECK_FIELDS
}

}  // namespace courier_test_messages_inspect_fields
