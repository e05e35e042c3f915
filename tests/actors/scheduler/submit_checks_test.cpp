// What the scheduler refuses in a submit whatever the load (actors/scheduler/submit_checks), at
// the edges of the documented ranges: OpenAI's logprobs (0..20) and logit_bias values
// ([-100, 100]), the vocabulary, max_model_len, and the KV cache's capacity in tokens.
#include "actors/scheduler/submit_checks.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_submit_checks {

using namespace courier;
using actors::batch_refusal;
using actors::logit_bias_refusal;
using actors::submit_refusal;

namespace {

msg::engine_ready engine() {
  msg::engine_ready r;
  r.vocab_size = 100;
  r.max_model_len = 64;
  return r;
}

msg::submit request(std::int32_t prompt_len = 4, std::int32_t max_tokens = 8) {
  msg::submit s;
  s.id = 1;
  s.prompt.assign(static_cast<std::size_t>(prompt_len), 7);
  s.max_tokens = max_tokens;
  return s;
}

// The refusal of `s` against a cache of `capacity` tokens, and its code.
std::pair<std::string, msg::error_code> refuse(const msg::submit& s,
                                               std::int64_t capacity = 1000) {
  msg::error_code code = msg::error_code::engine_failure;  // overwritten on every path
  std::string why = submit_refusal(s, engine(), capacity, code);
  return {why, code};
}

}  // namespace

TEST_CASE("submit checks: a plain request passes with no error code", "[scheduler]") {
  const auto [why, code] = refuse(request());
  CHECK(why.empty());
  CHECK(code == msg::error_code::none);
}

TEST_CASE("submit checks: parameters at and past their documented bounds", "[scheduler]") {
  msg::submit s = request();
  SECTION("logprobs 20 passes, 21 is refused") {
    s.sampling.logprobs = 20;
    CHECK(refuse(s).first.empty());
    s.sampling.logprobs = 21;
    CHECK(refuse(s).first == "logprobs must be at most 20, got 21");
    CHECK(refuse(s).second == msg::error_code::invalid_request);
  }
  SECTION("top_p must be in (0, 1]") {
    s.sampling.top_p = 1.0f;
    CHECK(refuse(s).first.empty());
    s.sampling.top_p = 0.0f;
    CHECK(refuse(s).first == "top_p must be in (0, 1]");
  }
  SECTION("a NaN temperature is refused, 0 (greedy) passes") {
    s.sampling.temperature = 0.0f;
    CHECK(refuse(s).first.empty());
    s.sampling.temperature = std::numeric_limits<float>::quiet_NaN();
    CHECK(refuse(s).first == "temperature must be non-negative");
  }
  SECTION("max_tokens 0 only when scoring the prompt") {
    s.max_tokens = 0;
    CHECK(refuse(s).first == "max_tokens must be at least 1, got 0");
    s.sampling.prompt_logprobs = 0;
    CHECK(refuse(s).first.empty());
  }
  SECTION("an embedding request runs its prompt and one row: max_tokens 1, no prompt logprobs") {
    s.sampling.embed = true;
    s.max_tokens = 1;
    CHECK(refuse(s).first.empty());
    s.max_tokens = 2;
    CHECK(refuse(s).first == "an embedding request computes its prompt and one row: max_tokens "
                             "1 (got 2), no prompt logprobs");
    s.max_tokens = 1;
    s.sampling.prompt_logprobs = 0;
    CHECK_FALSE(refuse(s).first.empty());
  }
  SECTION("an empty prompt, a token outside the vocabulary") {
    msg::submit empty = request(0);
    CHECK(refuse(empty).first == "the prompt is empty");
    s.prompt.back() = 100;
    CHECK(refuse(s).first == "token id 100 is outside the vocabulary of 100");
    CHECK(refuse(s).second == msg::error_code::invalid_request);
  }
}

TEST_CASE("submit checks: logit_bias values in [-100, 100], distinct tokens, 300 at most",
          "[scheduler]") {
  msg::sampling_params p;
  p.logit_bias_tokens = {1, 2};
  p.logit_bias_values = {-100.0f, 100.0f};
  CHECK(logit_bias_refusal(p, 100).empty());
  p.logit_bias_values = {-100.5f, 0.0f};
  CHECK(logit_bias_refusal(p, 100) ==
        "logit_bias value for token id 1 must be in [-100, 100], got -100.5");
  p.logit_bias_values = {std::nanf(""), 0.0f};
  CHECK_FALSE(logit_bias_refusal(p, 100).empty());
  p.logit_bias_values = {1.0f, 1.0f};
  p.logit_bias_tokens = {5, 5};
  CHECK(logit_bias_refusal(p, 100) == "logit_bias token id 5 appears more than once");
  p.logit_bias_tokens = {5, 100};
  CHECK(logit_bias_refusal(p, 100) == "logit_bias token id 100 is outside the vocabulary of 100");
  p.logit_bias_tokens = {5};
  CHECK(logit_bias_refusal(p, 100) == "logit_bias has 1 token ids but 2 values");
  p.logit_bias_tokens.assign(301, 0);
  p.logit_bias_values.assign(301, 0.0f);
  CHECK(logit_bias_refusal(p, 100) == "logit_bias may have at most 300 entries, got 301");
}

TEST_CASE("submit checks: too long for the model or for the whole KV cache", "[scheduler]") {
  // A prompt of max_model_len tokens leaves no room to generate.
  const auto at_limit = refuse(request(64, 1));
  CHECK(at_limit.first == "the prompt has 64 tokens; max_model_len is 64");
  CHECK(at_limit.second == msg::error_code::too_long);
  // Prompt plus max_tokens, capped at max_model_len, must fit the cache.
  CHECK(refuse(request(10, 30), 40).first.empty());
  const auto over = refuse(request(10, 31), 40);
  CHECK(over.first == "the request needs up to 41 tokens of KV cache; the cache holds 40");
  CHECK(over.second == msg::error_code::too_long);
  CHECK(refuse(request(10, 1000), 64).first.empty());  // capped at max_model_len = 64
}

namespace {

// Each choice's own check: ids over 100 are refused with too_long, as the core's refusal would
// refuse a prompt past max_model_len.
std::string own_check(const msg::submit& c, msg::error_code& code) {
  code = c.id > 100 ? msg::error_code::too_long : msg::error_code::none;
  return c.id > 100 ? "choice " + std::to_string(c.id) + " is too long" : "";
}

std::vector<msg::submit> choices(std::vector<msg::request_id> ids) {
  std::vector<msg::submit> out;
  for (const msg::request_id id : ids) {
    out.push_back(request());
    out.back().id = id;
  }
  return out;
}

}  // namespace

TEST_CASE("submit checks: a request's choices are refused together, for the first reason",
          "[scheduler]") {
  msg::error_code code = msg::error_code::engine_failure;
  CHECK(batch_refusal(choices({1, 2, 3}), own_check, 0, 8, code).empty());
  CHECK(code == msg::error_code::none);
  // The first refused choice says why, with its own code, whatever the load.
  CHECK(batch_refusal(choices({1, 101, 102}), own_check, 8, 8, code) == "choice 101 is too long");
  CHECK(code == msg::error_code::too_long);
  CHECK(batch_refusal(choices({1, 2, 1}), own_check, 0, 8, code) ==
        "request id 1 appears twice in one batch");
  CHECK(code == msg::error_code::invalid_request);
  CHECK(batch_refusal({}, own_check, 0, 8, code) == "a submit batch has no choices");
  CHECK(code == msg::error_code::invalid_request);
}

TEST_CASE("submit checks: more choices than may ever wait is the client's error, no room now "
          "is overload",
          "[scheduler]") {
  msg::error_code code = msg::error_code::none;
  // Nine choices can never wait behind a limit of eight: a 400, not worth a retry.
  CHECK(batch_refusal(choices({1, 2, 3, 4, 5, 6, 7, 8, 9}), own_check, 0, 8, code) ==
        "the request has 9 choices (prompts x n); at most 8 can wait (server.max_waiting)");
  CHECK(code == msg::error_code::invalid_request);
  // Room for exactly what is asked is enough; one more is overloaded, for one choice or many.
  CHECK(batch_refusal(choices({1, 2, 3}), own_check, 5, 8, code).empty());
  CHECK(batch_refusal(choices({1, 2, 3}), own_check, 6, 8, code) ==
        "the server is overloaded: 6 requests are waiting, no room for 3 more");
  CHECK(code == msg::error_code::overloaded);
  CHECK(batch_refusal(choices({1}), own_check, 8, 8, code) ==
        "the server is overloaded: 8 requests are waiting");
  CHECK(code == msg::error_code::overloaded);
}

}  // namespace courier_test_actors_scheduler_submit_checks
