// The state one request shares between its connection and its writer.
#include <catch2/catch.hpp>

#include "actors/admission/http/exchange.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_exchange {

using namespace courier::http;

TEST_CASE("exchange: disconnect callbacks run once, in order, when the client goes first",
          "[http]") {
  exchange ex;
  std::vector<int> calls;
  ex.add_disconnect_callback([&] { calls.push_back(1); });
  ex.add_disconnect_callback([&] { calls.push_back(2); });
  CHECK(ex.state() == exchange_state::open);
  ex.mark_gone();
  CHECK(ex.state() == exchange_state::gone);
  CHECK(calls == std::vector<int>{1, 2});
  ex.mark_gone();
  ex.finish();  // too late: gone stays gone
  CHECK(ex.state() == exchange_state::gone);
  CHECK(calls == std::vector<int>{1, 2});
  ex.add_disconnect_callback([&] { calls.push_back(3); });  // already gone: runs at once
  CHECK(calls == std::vector<int>{1, 2, 3});
}

TEST_CASE("exchange: a finished response drops its callbacks unrun", "[http]") {
  exchange ex;
  int num_calls = 0;
  auto held = std::make_shared<int>(0);
  ex.add_disconnect_callback([&num_calls, held] { ++num_calls; });
  CHECK(held.use_count() == 2);
  ex.finish();
  CHECK(held.use_count() == 1);  // released, so a callback holding the writer is no cycle
  ex.mark_gone();
  ex.add_disconnect_callback([&] { ++num_calls; });
  CHECK(num_calls == 0);
  CHECK(ex.state() == exchange_state::finished);
}

TEST_CASE("exchange: a throwing callback does not stop the others", "[http]") {
  exchange ex;
  int num_calls = 0;
  ex.add_disconnect_callback([] { throw std::runtime_error("bad callback"); });
  ex.add_disconnect_callback([&] { ++num_calls; });
  CHECK_NOTHROW(ex.mark_gone());
  CHECK(num_calls == 1);
}

TEST_CASE("exchange: a callback may add another, which then runs at once", "[http]") {
  exchange ex;
  int num_calls = 0;
  ex.add_disconnect_callback([&] {
    ++num_calls;
    ex.add_disconnect_callback([&] { ++num_calls; });
  });
  ex.mark_gone();
  CHECK(num_calls == 2);
}

}  // namespace courier_test_actors_admission_http_exchange
