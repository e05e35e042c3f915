// Compiled, not run, by the tests inspect_check_accepts_every_field_listed (with
// LIST_EVERY_FIELD: it compiles) and inspect_check_refuses_a_missing_field (without: the
// compile fails naming the nested struct whose inspect leaves a field out).
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "messages/inspect_check.hpp"

namespace probe {

struct inner {
  std::int32_t a = 0;
  std::string b;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inner& x) {
#ifdef LIST_EVERY_FIELD
  return f(caf::meta::type_name("inner"), x.a, x.b);
#else
  return f(caf::meta::type_name("inner"), x.a);
#endif
}

// Checked through its vector of inner.
struct outer {
  std::uint64_t id = 0;
  std::vector<inner> inners;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, outer& x) {
  return f(caf::meta::type_name("outer"), x.id, x.inners);
}

}  // namespace probe

static_assert(courier::msg::inspect_lists_every_field_of<probe::outer>());
