// The API's paths and methods: what is routed where, what a 405 allows, and model ids in paths.
#include <catch2/catch.hpp>

#include "actors/admission/http_errors.hpp"
#include "actors/admission/routes.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_routes {

using namespace courier::admission;

TEST_CASE("routes: each API path has its route and unknown paths have none", "[admission]") {
  CHECK(find_route("/health")->which == route::health);
  CHECK(find_route("/metrics")->which == route::metrics);
  CHECK(find_route("/v1/models")->which == route::models);
  CHECK(find_route("/tokenize")->which == route::tokenize);
  CHECK(find_route("/detokenize")->which == route::detokenize);
  CHECK(find_route("/v1/completions")->which == route::completions);
  CHECK(find_route("/v1/chat/completions")->which == route::chat);
  CHECK(find_route("/server_info")->which == route::server_info);
  CHECK(find_route("/v1/messages")->which == route::messages);
  CHECK(find_route("/v1/messages/count_tokens")->which == route::count_tokens);
  CHECK(find_route("/v1/embeddings")->which == route::embeddings);
  CHECK(takes_method(route::embeddings, "POST"));
  CHECK_FALSE(takes_method(route::embeddings, "GET"));
  CHECK(takes_method(route::count_tokens, "POST"));
  CHECK_FALSE(find_route("/v1/messages/batches"));
  CHECK_FALSE(find_route("/v1/nowhere"));
  CHECK_FALSE(find_route("/v1/models/"));
  CHECK_FALSE(find_route("/health/"));
  // The web page: its index at "/", its files under "/ui/"; read without a key.
  CHECK(find_route("/")->which == route::web);
  CHECK(find_route("/ui/app.js")->which == route::web);
  CHECK(find_route("/ui/app.js")->asset == "/ui/app.js");
  CHECK_FALSE(find_route("/ui/"));
  CHECK_FALSE(find_route("/index.html"));
  CHECK(takes_method(route::web, "GET"));
  CHECK_FALSE(takes_method(route::web, "POST"));
  CHECK(is_public(route::web));
  CHECK_FALSE(is_public(route::models));
}

TEST_CASE("routes: a model id is everything after /v1/models/, percent-decoded", "[admission]") {
  auto m = find_route("/v1/models/tiny-llama3");
  REQUIRE(m);
  CHECK(m->which == route::model);
  CHECK(m->id == "tiny-llama3");
  CHECK(find_route("/v1/models/meta-llama/Llama-3-8B")->id == "meta-llama/Llama-3-8B");
  CHECK(find_route("/v1/models/org%2Fname%20x")->id == "org/name x");
  CHECK(find_route("/v1/models/100%")->id == "100%");
  CHECK(find_route("/v1/models/a%zz")->id == "a%zz");
}

TEST_CASE("routes: /v1/responses/{id} is one kept response, read or removed", "[admission]") {
  auto m = find_route("/v1/responses/resp_abc");
  REQUIRE(m);
  CHECK(m->which == route::stored_response);
  CHECK(m->id == "resp_abc");
  CHECK(find_route("/v1/responses/resp%5Fx")->id == "resp_x");
  CHECK(find_route("/v1/responses")->which == route::responses);
  CHECK_FALSE(find_route("/v1/responses/"));
  CHECK_FALSE(find_route("/v1/responses/resp_abc/input_items"));  // not served
  for (const char* method : {"GET", "HEAD", "DELETE", "OPTIONS"}) {
    CHECK(takes_method(route::stored_response, method));
  }
  CHECK_FALSE(takes_method(route::stored_response, "POST"));
  CHECK(std::string(allowed_methods(route::stored_response)) == "GET, HEAD, DELETE, OPTIONS");
  CHECK_FALSE(is_public(route::stored_response));
  CHECK_FALSE(takes_method(route::responses, "DELETE"));
}

TEST_CASE("routes: reads take GET and HEAD, computations POST, and all OPTIONS", "[admission]") {
  for (route r : {route::health, route::metrics, route::models, route::model,
                  route::server_info}) {
    CHECK(takes_method(r, "GET"));
    CHECK(takes_method(r, "HEAD"));
    CHECK(takes_method(r, "OPTIONS"));
    CHECK_FALSE(takes_method(r, "POST"));
    CHECK(std::string(allowed_methods(r)) == "GET, HEAD, OPTIONS");
  }
  for (route r : {route::tokenize, route::detokenize, route::completions, route::chat}) {
    CHECK(takes_method(r, "POST"));
    CHECK_FALSE(takes_method(r, "GET"));
    CHECK_FALSE(takes_method(r, "DELETE"));
    CHECK(std::string(allowed_methods(r)) == "POST, OPTIONS");
  }
  CHECK(is_public(route::health));
  CHECK(is_public(route::metrics));
  CHECK_FALSE(is_public(route::models));
  CHECK_FALSE(is_public(route::server_info));  // the same key as the API
}

TEST_CASE("http errors: a 503 tells the client when to retry, other errors add nothing",
          "[admission]") {
  const auto h = error_headers(503);
  REQUIRE(h.size() == 1);
  CHECK(h[0].first == "Retry-After");
  CHECK(h[0].second == std::to_string(retry_after_s));
  CHECK(error_headers(400).empty());
  CHECK(error_headers(500).empty());
}

}  // namespace courier_test_actors_admission_routes
