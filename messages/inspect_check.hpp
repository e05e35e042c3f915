#pragma once
// A compile-time check that an inspect() lists every field of its struct. CAF serializes what
// inspect lists, so a field left out never crosses the cluster wire (a replica or a front end
// gets its default, silently) and is missing from logs.
//
//   static_assert(msg::inspect_lists_every_field<caf::id_block::courier_messages>());
//
// checks every type of a CAF type-ID block and, through them, every inspected struct they hold
// (directly or in a std::vector). A struct's fields are counted by brace initialization,
// independently of its inspect; a field that stays in the process on purpose is declared by
// the struct itself: `static constexpr std::size_t process_local_fields = N;`.
#include <caf/meta/annotation.hpp>
#include <caf/type_id.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace courier::msg {
namespace inspect_check_detail {

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

template <class T, class = void>
struct local_fields : std::integral_constant<std::size_t, 0> {};
template <class T>
struct local_fields<T, std::void_t<decltype(T::process_local_fields)>>
    : std::integral_constant<std::size_t, T::process_local_fields> {};

template <class T>
struct checker;

// Whether T is a struct with an inspect() of its own (found by argument-dependent lookup).
template <class T, class = void>
struct inspected : std::false_type {};
template <class T>
struct inspected<T, std::void_t<decltype(inspect(std::declval<checker<T>&>(), std::declval<T&>()))>>
    : std::bool_constant<std::is_class_v<T> && std::is_aggregate_v<T>> {};

template <class T>
void check(T& x);

// A member that is itself an inspected struct, or a vector of them, is checked too.
template <class T>
constexpr void check_member() {
  if constexpr (inspected<T>::value) {
    static_cast<void>(&check<T>);
  }
}
template <class T, class A>
constexpr void check_member_of(const std::vector<T, A>*) {
  check_member<T>();
}
template <class T>
constexpr void check_member_of(const T*) {
  check_member<T>();
}

template <class T>
struct checker {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;

  template <class... Ts>
  void operator()(Ts&&...) {
    constexpr std::size_t listed =
        (std::size_t{0} + ... + (caf::meta::is_annotation<std::decay_t<Ts>>::value ? 0 : 1));
    static_assert(listed + local_fields<T>::value == field_count<T>(),
                  "this struct's inspect() does not list every field (see the instantiation "
                  "above: checker<the struct>); list it, or count it in process_local_fields");
    (check_member_of(static_cast<const std::decay_t<Ts>*>(nullptr)), ...);
  }
};

// Instantiated, never called: its instantiation runs the checker's static_assert.
template <class T>
void check(T& x) {
  static_assert(std::is_aggregate_v<T>, "a message is a plain struct");
  checker<T> f;
  inspect(f, x);
}

// A message of a type-ID block: a plain struct with an inspect() of its own.
template <class T>
constexpr void check_message() {
  static_assert(inspected<T>::value, "a message is a plain struct with an inspect()");
  static_cast<void>(&check<T>);
}

template <class Block, caf::type_id_t... I>
constexpr bool check_block(std::integer_sequence<caf::type_id_t, I...>) {
  (check_message<typename caf::type_by_id<Block::begin + I>::type>(), ...);
  return true;
}

}  // namespace inspect_check_detail

// True, or a compile error naming the struct whose inspect leaves a field out.
template <class... T>
constexpr bool inspect_lists_every_field_of() {
  (inspect_check_detail::check_message<T>(), ...);
  return true;
}

template <class Block>
constexpr bool inspect_lists_every_field() {
  return inspect_check_detail::check_block<Block>(
      std::make_integer_sequence<caf::type_id_t, Block::end - Block::begin>{});
}

}  // namespace courier::msg
