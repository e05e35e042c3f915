#pragma once
// The responses `/v1/responses` keeps (OpenAI's `store`): what `previous_response_id` continues,
// what an input item `item_reference` names, what `GET` and `DELETE /v1/responses/{id}` read and
// remove. In memory only, and bounded:
// - scoped to a tenant: another tenant's id is unknown, exactly as one never stored (a 404, a
//   400), so an id tells nothing of another tenant;
// - at most `max_bytes` together (the JSON texts kept, plus a fixed cost per response): a new
//   response pushes out the oldest; one larger than the whole bound is not kept;
// - each for `max_age_ms` at most after it was kept (expired ones go on the next call).
// Each response is kept as JSON text, with the conversation it answered (the input items, the
// earlier responses' included), so a chain of previous_response_id stays whole when an earlier
// link has gone. Shared by the text lanes (lookups) and the request actors (keep): it locks;
// texts are parsed and written outside the lock.
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace courier::admission {

class response_store {
 public:
  // Milliseconds on a clock that never goes back (steady_clock unless a test gives its own).
  using clock_fn = std::function<std::int64_t()>;
  // What one response costs beyond its texts (its entries in the maps), in the byte bound.
  static constexpr std::size_t fixed_bytes = 256;

  response_store(std::size_t max_bytes, std::int64_t max_age_ms, clock_fn now_ms = {});

  // Keeps `response` (a response object with its "id" and "output" items) for `tenant`, with
  // `conversation` (the input items it answered). A response already kept under the same id
  // is replaced. False when it is larger than the whole bound (nothing kept).
  bool keep(const std::string& tenant, const nlohmann::ordered_json& response,
            const nlohmann::ordered_json& conversation);

  // The response object's JSON text, as kept.
  std::optional<std::string> response_text(const std::string& tenant, const std::string& id);
  // The conversation a follow-up of `id` continues: its input items, then its output items.
  std::optional<nlohmann::ordered_json> continued(const std::string& tenant, const std::string& id);
  // The output item with this id, of any response the tenant keeps.
  std::optional<nlohmann::ordered_json> item(const std::string& tenant, const std::string& item_id);
  // Removes a response (its items with it). False: none kept under that id.
  bool erase(const std::string& tenant, const std::string& id);

  std::size_t size() const;
  std::size_t bytes() const;

 private:
  using key = std::pair<std::string, std::string>;  // tenant, id
  struct entry {
    key k;
    std::string response;      // the response object's JSON text
    std::string conversation;  // the input items' JSON text (an array)
    std::vector<std::string> item_ids;
    std::int64_t kept_ms = 0;
    std::size_t bytes = 0;
  };
  using entries = std::list<entry>;  // oldest first

  void expire(std::int64_t now_ms);         // holds mutex_
  void remove(entries::iterator it);        // holds mutex_
  // What `pick` copies out of the entry under `k` (under the lock, after expiring); nullopt
  // when none is kept.
  template <class Pick>
  auto copy_out(const key& k, Pick pick)
      -> std::optional<decltype(pick(std::declval<const entry&>()))>;
  std::int64_t now() const;

  std::size_t max_bytes_;
  std::int64_t max_age_ms_;
  clock_fn now_ms_;
  mutable std::mutex mutex_;
  entries kept_;
  std::map<key, entries::iterator> by_id_;
  std::map<key, entries::iterator> by_item_;  // tenant, output item id
  std::size_t bytes_ = 0;
};

}  // namespace courier::admission
