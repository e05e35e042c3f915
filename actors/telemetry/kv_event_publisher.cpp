#include "actors/telemetry/kv_event_publisher.hpp"

#include <fmt/format.h>
#include <msgpack.hpp>
#include <zmq.h>

#include <chrono>
#include <stdexcept>

namespace courier::telemetry {

namespace {

using packer = msgpack::packer<msgpack::sbuffer>;

void pack_string(packer& pk, const std::string& s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_hashes(packer& pk, const std::vector<std::uint64_t>& hashes) {
  pk.pack_array(static_cast<std::uint32_t>(hashes.size()));
  for (std::uint64_t h : hashes) pk.pack_uint64(h);
}

void pack_event(packer& pk, const cache::cache_event& e, const std::string& medium) {
  switch (e.what) {
    case cache::cache_event::kind::stored:
      pk.pack_array(7);
      pack_string(pk, "BlockStored");
      pack_hashes(pk, e.hashes);
      if (e.parent) {
        pk.pack_uint64(*e.parent);
      } else {
        pk.pack_nil();
      }
      pk.pack_array(static_cast<std::uint32_t>(e.tokens.size()));
      for (cache::token_id t : e.tokens) pk.pack_uint32(t);
      pk.pack_uint32(e.block_size);
      if (e.adapter_id != 0) {
        pk.pack_uint32(e.adapter_id);
      } else {
        pk.pack_nil();
      }
      pack_string(pk, medium);
      return;
    case cache::cache_event::kind::removed:
      pk.pack_array(3);
      pack_string(pk, "BlockRemoved");
      pack_hashes(pk, e.hashes);
      pack_string(pk, medium);
      return;
    case cache::cache_event::kind::cleared:
      pk.pack_array(1);
      pack_string(pk, "AllBlocksCleared");
      return;
  }
}

}  // namespace

std::string encode_kv_event_batch(double ts, const cache::cache_event_log& events,
                                  const std::string& medium) {
  msgpack::sbuffer buf;
  packer pk(&buf);
  pk.pack_array(2);
  pk.pack_double(ts);
  pk.pack_array(static_cast<std::uint32_t>(events.size()));
  for (const cache::cache_event& e : events) pack_event(pk, e, medium);
  return std::string(buf.data(), buf.size());
}

kv_event_publisher::kv_event_publisher(kv_event_options options) : options_(std::move(options)) {
  context_ = zmq_ctx_new();
  socket_ = context_ ? zmq_socket(context_, ZMQ_PUB) : nullptr;
  const int linger = 1000;  // at close, up to 1 s to hand what is queued to subscribers
  if (socket_ == nullptr || zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_bind(socket_, options_.endpoint.c_str()) != 0) {
    const std::string why = zmq_strerror(zmq_errno());
    if (socket_) zmq_close(socket_);
    if (context_) zmq_ctx_term(context_);
    throw std::runtime_error(
        fmt::format("kv_events.endpoint: cannot bind '{}': {}", options_.endpoint, why));
  }
  thread_ = std::thread([this] { run(); });
}

kv_event_publisher::~kv_event_publisher() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
  zmq_close(socket_);
  zmq_ctx_term(context_);
}

void kv_event_publisher::publish(cache::cache_event_log events) {
  if (events.empty()) return;
  const double ts = std::chrono::duration<double>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  {
    std::lock_guard<std::mutex> lock(m_);
    queue_.push_back({ts, std::move(events)});
  }
  cv_.notify_one();
}

void kv_event_publisher::run() {
  for (;;) {
    batch b;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped, everything sent
      b = std::move(queue_.front());
      queue_.pop_front();
    }
    const std::string payload = encode_kv_event_batch(b.ts, b.events, options_.medium);
    unsigned char seq[8];
    for (int i = 0; i < 8; ++i) seq[i] = static_cast<unsigned char>(seq_ >> (56 - 8 * i));
    ++seq_;
    // A PUB socket never blocks on send: past a subscriber's high-water mark it drops for it.
    zmq_send(socket_, options_.topic.data(), options_.topic.size(), ZMQ_SNDMORE);
    zmq_send(socket_, seq, sizeof seq, ZMQ_SNDMORE);
    zmq_send(socket_, payload.data(), payload.size(), 0);
  }
}

}  // namespace courier::telemetry
