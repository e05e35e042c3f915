#include "actors/admission/response_store.hpp"

#include <chrono>
#include <iterator>

namespace courier::admission {

using nlohmann::ordered_json;

namespace {

std::string text_of(const ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

response_store::response_store(std::size_t max_bytes, std::int64_t max_age_ms, clock_fn now_ms)
    : max_bytes_(max_bytes), max_age_ms_(max_age_ms), now_ms_(std::move(now_ms)) {}

std::int64_t response_store::now() const {
  if (now_ms_) return now_ms_();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool response_store::keep(const std::string& tenant, const ordered_json& response,
                          const ordered_json& conversation) {
  entry e;
  e.k = {tenant, response.at("id").get<std::string>()};
  e.response = text_of(response);
  e.conversation = text_of(conversation);
  if (const auto out = response.find("output"); out != response.end() && out->is_array()) {
    for (const ordered_json& it : *out) {
      if (const auto id = it.find("id"); id != it.end() && id->is_string()) {
        e.item_ids.push_back(id->get<std::string>());
      }
    }
  }
  e.bytes = fixed_bytes + e.k.first.size() + e.k.second.size() + e.response.size() +
            e.conversation.size();
  for (const std::string& id : e.item_ids) e.bytes += id.size();
  const std::int64_t t = now();
  std::lock_guard<std::mutex> lock(mutex_);
  expire(t);
  if (const auto old = by_id_.find(e.k); old != by_id_.end()) remove(old->second);
  if (e.bytes > max_bytes_) return false;
  while (bytes_ + e.bytes > max_bytes_) remove(kept_.begin());
  e.kept_ms = t;
  bytes_ += e.bytes;
  kept_.push_back(std::move(e));
  const auto it = std::prev(kept_.end());
  by_id_[it->k] = it;
  for (const std::string& id : it->item_ids) by_item_[{tenant, id}] = it;
  return true;
}

void response_store::expire(std::int64_t now_ms) {
  while (!kept_.empty() && now_ms - kept_.front().kept_ms >= max_age_ms_) remove(kept_.begin());
}

void response_store::remove(entries::iterator it) {
  for (const std::string& id : it->item_ids) {
    const auto item = by_item_.find({it->k.first, id});
    if (item != by_item_.end() && item->second == it) by_item_.erase(item);
  }
  by_id_.erase(it->k);
  bytes_ -= it->bytes;
  kept_.erase(it);
}

template <class Pick>
auto response_store::copy_out(const key& k, Pick pick)
    -> std::optional<decltype(pick(std::declval<const entry&>()))> {
  const std::int64_t t = now();
  std::lock_guard<std::mutex> lock(mutex_);
  expire(t);
  const auto it = by_id_.find(k);
  if (it == by_id_.end()) return std::nullopt;
  return pick(*it->second);
}

std::optional<std::string> response_store::response_text(const std::string& tenant,
                                                          const std::string& id) {
  return copy_out({tenant, id}, [](const entry& e) { return e.response; });
}

std::optional<ordered_json> response_store::continued(const std::string& tenant,
                                                      const std::string& id) {
  const auto texts = copy_out(
      {tenant, id}, [](const entry& e) { return std::make_pair(e.conversation, e.response); });
  if (!texts) return std::nullopt;
  ordered_json items = ordered_json::parse(texts->first);
  ordered_json response = ordered_json::parse(texts->second);
  for (ordered_json& it : response.at("output")) items.push_back(std::move(it));
  return items;
}

std::optional<ordered_json> response_store::item(const std::string& tenant,
                                                 const std::string& item_id) {
  std::string text;  // the response holding it
  {
    const std::int64_t t = now();
    std::lock_guard<std::mutex> lock(mutex_);
    expire(t);
    const auto it = by_item_.find({tenant, item_id});
    if (it == by_item_.end()) return std::nullopt;
    text = it->second->response;
  }
  ordered_json response = ordered_json::parse(text);
  for (ordered_json& it : response.at("output")) {
    if (it.value("id", std::string()) == item_id) return std::move(it);
  }
  return std::nullopt;
}

bool response_store::erase(const std::string& tenant, const std::string& id) {
  const std::int64_t t = now();
  std::lock_guard<std::mutex> lock(mutex_);
  expire(t);
  const auto it = by_id_.find({tenant, id});
  if (it == by_id_.end()) return false;
  remove(it->second);
  return true;
}

std::size_t response_store::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_.size();
}

std::size_t response_store::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace courier::admission
