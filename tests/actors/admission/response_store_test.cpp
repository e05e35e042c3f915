// The responses /v1/responses keeps (response_store) against its contract: kept by tenant and
// id (another tenant's is unknown), the conversation a follow-up continues, output items by
// id, removal, the byte bound (the oldest go first; one too large is not kept), the age bound;
// then the way in and out of a Responses request through it (chat_body_of, format_writer):
// what a follow-up continues, what `store` echoes, what a finished response (whole or streamed)
// leaves kept, and that a stream ended by an error keeps nothing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/admission/api_format.hpp"
#include "actors/admission/response_store.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_response_store {

using namespace courier::admission;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json response(const std::string& id, const std::string& text) {
  return {{"id", id},
          {"object", "response"},
          {"output",
           {{{"type", "message"},
             {"id", "msg_" + id},
             {"role", "assistant"},
             {"content", {{{"type", "output_text"}, {"text", text}}}}},
            {{"type", "function_call"},
             {"id", "fc_" + id},
             {"call_id", "call_" + id},
             {"name", "f"},
             {"arguments", "{}"}}}}};
}

ordered_json user(const std::string& text) {
  return ordered_json::array({{{"type", "message"}, {"role", "user"}, {"content", text}}});
}

std::size_t cost(const std::string& tenant, const ordered_json& r, const ordered_json& conv) {
  std::size_t ids = 0;
  for (const ordered_json& it : r["output"]) ids += it["id"].get<std::string>().size();
  return response_store::fixed_bytes + tenant.size() + r["id"].get<std::string>().size() +
         r.dump().size() + conv.dump().size() + ids;
}

}  // namespace

TEST_CASE(
    "response store: a tenant's responses, their conversations and items; no other "
    "tenant's",
    "[admission]") {
  response_store store(1 << 20, 60000, [] { return std::int64_t{0}; });
  const ordered_json r = response("resp_1", "Hello");
  REQUIRE(store.keep("team-a", r, user("Hi")));
  CHECK(store.size() == 1);
  CHECK(store.bytes() == cost("team-a", r, user("Hi")));
  CHECK(store.response_text("team-a", "resp_1") == r.dump());
  ordered_json expected = user("Hi");
  expected.push_back(r["output"][0]);
  expected.push_back(r["output"][1]);
  CHECK(store.continued("team-a", "resp_1") == expected);
  CHECK(store.item("team-a", "msg_resp_1") == r["output"][0]);
  CHECK(store.item("team-a", "fc_resp_1") == r["output"][1]);
  CHECK_FALSE(store.item("team-a", "msg_resp_2"));
  // Another tenant sees none of it, and cannot remove it.
  CHECK_FALSE(store.response_text("team-b", "resp_1"));
  CHECK_FALSE(store.continued("team-b", "resp_1"));
  CHECK_FALSE(store.item("team-b", "msg_resp_1"));
  CHECK_FALSE(store.erase("team-b", "resp_1"));
  CHECK(store.size() == 1);
  // The same id kept again replaces it.
  const ordered_json again = response("resp_1", "Hello again");
  REQUIRE(store.keep("team-a", again, user("Hi")));
  CHECK(store.size() == 1);
  CHECK(store.response_text("team-a", "resp_1") == again.dump());
  CHECK(store.bytes() == cost("team-a", again, user("Hi")));
  // Removed with its items.
  CHECK(store.erase("team-a", "resp_1"));
  CHECK_FALSE(store.erase("team-a", "resp_1"));
  CHECK_FALSE(store.response_text("team-a", "resp_1"));
  CHECK_FALSE(store.item("team-a", "msg_resp_1"));
  CHECK(store.size() == 0);
  CHECK(store.bytes() == 0);
}

TEST_CASE(
    "response store: past the byte bound the oldest go first; one larger than the bound "
    "is not kept",
    "[admission]") {
  const ordered_json r1 = response("resp_1", "a"), r2 = response("resp_2", "b"),
                     r3 = response("resp_3", "c");
  const std::size_t one = cost("t", r1, user("x"));
  REQUIRE(cost("t", r2, user("x")) == one);
  response_store store(2 * one + one / 2, 60000, [] { return std::int64_t{0}; });
  REQUIRE(store.keep("t", r1, user("x")));
  REQUIRE(store.keep("t", r2, user("x")));
  CHECK(store.bytes() == 2 * one);
  REQUIRE(store.keep("t", r3, user("x")));  // resp_1 goes to make room
  CHECK(store.size() == 2);
  CHECK(store.bytes() == 2 * one);
  CHECK_FALSE(store.response_text("t", "resp_1"));
  CHECK_FALSE(store.item("t", "msg_resp_1"));
  CHECK(store.response_text("t", "resp_2"));
  CHECK(store.response_text("t", "resp_3"));
  // Larger than the whole bound: refused, and nothing else is pushed out for it.
  const ordered_json huge = response("resp_4", std::string(3 * one, 'z'));
  CHECK_FALSE(store.keep("t", huge, user("x")));
  CHECK(store.size() == 2);
  CHECK_FALSE(store.response_text("t", "resp_4"));
}

TEST_CASE("response store: a response lasts max_age after it was kept", "[admission]") {
  std::int64_t now = 1000;
  response_store store(1 << 20, 500, [&] { return now; });
  REQUIRE(store.keep("t", response("resp_1", "a"), user("x")));
  now = 1300;
  REQUIRE(store.keep("t", response("resp_2", "b"), user("y")));
  now = 1499;
  CHECK(store.response_text("t", "resp_1"));
  now = 1500;  // resp_1's age is max_age: gone, items too; resp_2 is younger
  CHECK_FALSE(store.response_text("t", "resp_1"));
  CHECK_FALSE(store.item("t", "fc_resp_1"));
  CHECK(store.item("t", "fc_resp_2"));
  CHECK(store.size() == 1);
  now = 1800;
  CHECK_FALSE(store.continued("t", "resp_2"));
  CHECK(store.size() == 0);
  CHECK(store.bytes() == 0);
}

namespace {

// A whole chat.completion as the request actor builds it.
json chat_response(const std::string& id, const std::string& text) {
  return {{"id", id},
          {"object", "chat.completion"},
          {"created", 7},
          {"model", "m"},
          {"choices",
           {{{"index", 0},
             {"finish_reason", "stop"},
             {"message", {{"role", "assistant"}, {"content", text}}}}}},
          {"usage", {{"prompt_tokens", 3}, {"completion_tokens", 1}, {"total_tokens", 4}}}};
}

json chat_chunk(const std::string& id, json delta, json finish) {
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", 7},
          {"model", "m"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
}

}  // namespace

TEST_CASE(
    "stored responses: a follow-up continues the kept conversation; store echoes whether "
    "the response is kept",
    "[admission]") {
  auto store = std::make_shared<response_store>(1 << 20, 60000);
  // A first response, kept when whole.
  api_format f = api_format::responses;
  client_body first;
  const json chat1 = json::parse(chat_body_of(
      f, true, R"({"model":"m","instructions":"Be brief.","input":"Hi"})", 64, store, "t", first));
  CHECK(chat1["messages"] == json::parse(R"([{"role":"system","content":"Be brief."},
                                             {"role":"user","content":"Hi"}])"));
  CHECK(first.original["store"] == true);  // OpenAI keeps a response unless told not to
  REQUIRE(first.keep);
  format_writer w1(f, "chatcmpl-one", 7, "m", 3, first);
  const json r1 = json::parse(w1.whole(chat_response("chatcmpl-one", "Hello")));
  CHECK(r1["id"] == "resp_one");
  CHECK(r1["store"] == true);
  REQUIRE(store->response_text("t", "resp_one"));
  CHECK(json::parse(*store->response_text("t", "resp_one")) == r1);

  // The follow-up: the earlier input and output, then its own input; the instructions are
  // its own only.
  client_body second;
  const json chat2 = json::parse(chat_body_of(
      f, true, R"({"model":"m","previous_response_id":"resp_one","input":"And you?","store":true})",
      64, store, "t", second));
  CHECK(chat2["messages"] == json::parse(R"([{"role":"user","content":"Hi"},
      {"role":"assistant","content":[{"type":"text","text":"Hello"}]},
      {"role":"user","content":"And you?"}])"));
  // Streamed, and kept at its end: its conversation is the whole of it.
  format_writer w2(f, "chatcmpl-two", 7, "m", 3, second);
  w2.chunk(chat_chunk("chatcmpl-two", {{"role", "assistant"}, {"content", "Fine"}}, nullptr));
  w2.chunk(chat_chunk("chatcmpl-two", json::object(), "stop"));
  CHECK(w2.end().find("response.completed") != std::string::npos);
  const std::optional<ordered_json> r2 = store->continued("t", "resp_two");
  REQUIRE(r2);
  CHECK(r2->size() == 4);  // Hi, Hello, And you?, Fine
  CHECK((*r2)[2]["content"] == "And you?");
  CHECK((*r2)[3]["content"][0]["text"] == "Fine");
  CHECK(json::parse(*store->response_text("t", "resp_two"))["previous_response_id"] == "resp_one");

  // An item_reference is the kept item; another tenant's ids are unknown.
  client_body third;
  const json chat3 =
      json::parse(chat_body_of(f, true,
                               R"({"model":"m","input":[{"type":"item_reference","id":"msg_two"},
          {"role":"user","content":"Ok"}],"store":false})",
                               64, store, "t", third));
  CHECK(chat3["messages"][0] ==
        json::parse(R"({"role":"assistant","content":[{"type":"text","text":"Fine"}]})"));
  CHECK(third.original["store"] == false);
  CHECK_FALSE(third.keep);
  client_body other;
  try {
    chat_body_of(f, true, R"({"model":"m","previous_response_id":"resp_one","input":"x"})", 64,
                 store, "u", other);
    FAIL("another tenant's response was continued");
  } catch (const api_error& e) {
    CHECK(e.status == 400);
    CHECK(e.param == "previous_response_id");
  }

  // No store: store echoes false, and a stream that ends in an error keeps nothing.
  client_body off;
  chat_body_of(f, true, R"({"model":"m","input":"Hi"})", 64, nullptr, "t", off);
  CHECK(off.original["store"] == false);
  CHECK_FALSE(off.keep);
  client_body failed;
  chat_body_of(f, true, R"({"model":"m","input":"Hi"})", 64, store, "t", failed);
  format_writer w3(f, "chatcmpl-three", 7, "m", 3, failed);
  w3.chunk({{"error", {{"message", "boom"}, {"type", "server_error"}}}});
  w3.end();
  CHECK_FALSE(store->response_text("t", "resp_three"));
}

}  // namespace courier_test_actors_admission_response_store
