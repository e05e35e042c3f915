// API keys in the Authorization header: the Bearer scheme in any case, whitespace tolerated,
// and the tenant a key maps to.
#include <catch2/catch.hpp>

#include "actors/admission/auth.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_auth {

using namespace courier;
using admission::bearer_key;

TEST_CASE("auth: the Bearer scheme matches in any case and whitespace around it is tolerated",
          "[admission]") {
  CHECK(bearer_key("Bearer k1") == std::optional<std::string>("k1"));
  CHECK(bearer_key("bearer k1") == std::optional<std::string>("k1"));
  CHECK(bearer_key("BEARER k1") == std::optional<std::string>("k1"));
  CHECK(bearer_key("  Bearer \t k1  ") == std::optional<std::string>("k1"));
  CHECK(bearer_key("Bearer sk-a.b_c=") == std::optional<std::string>("sk-a.b_c="));
}

TEST_CASE("auth: another scheme, no key or no space after the scheme is no key", "[admission]") {
  CHECK_FALSE(bearer_key("Basic k1"));
  CHECK_FALSE(bearer_key("Bearer"));
  CHECK_FALSE(bearer_key("Bearer   "));
  CHECK_FALSE(bearer_key("Bearerk1"));
  CHECK_FALSE(bearer_key("k1"));
  CHECK_FALSE(bearer_key(""));
}

TEST_CASE("auth: a request's tenant is its key's, none without a known key, any without keys",
          "[admission]") {
  const std::map<std::string, std::string> keys = {{"k1", "team-a"}};
  http::request r;
  CHECK_FALSE(admission::tenant_of(keys, r));
  r.headers["authorization"] = "bearer k1";
  CHECK(admission::tenant_of(keys, r) == std::optional<std::string>("team-a"));
  r.headers["authorization"] = "Bearer k2";
  CHECK_FALSE(admission::tenant_of(keys, r));
  // Without keys, every request is the one shared tenant (so the shared lookup cache works).
  CHECK(admission::tenant_of({}, r) == std::optional<std::string>(admission::unauthenticated_tenant));
  CHECK(std::string(admission::unauthenticated_tenant) != "");
}

}  // namespace courier_test_actors_admission_auth
