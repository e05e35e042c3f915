#include "actors/telemetry/kv_event_publisher.hpp"

#include <fmt/format.h>
#include <msgpack.hpp>
#include <zmq.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

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

const char* medium_name(cache::cache_medium m) {
  switch (m) {
    case cache::cache_medium::cpu:
      return "CPU";
    case cache::cache_medium::disk:
      return "DISK";
    case cache::cache_medium::gpu:
      break;
  }
  return "GPU";
}

void pack_event(packer& pk, const cache::cache_event& e) {
  const char* const medium = medium_name(e.medium);
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

std::string encode_kv_event_batch(double ts, const cache::cache_event_log& events) {
  msgpack::sbuffer buf;
  packer pk(&buf);
  pk.pack_array(2);
  // Always a float64, as msgspec writes a float: msgpack-c's pack_double writes a whole
  // number (a ts exactly on the second) as an integer.
  std::uint64_t bits = 0;
  std::memcpy(&bits, &ts, sizeof bits);
  char f64[9] = {static_cast<char>(0xcb)};
  for (int i = 0; i < 8; ++i) f64[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  buf.write(f64, sizeof f64);
  pk.pack_array(static_cast<std::uint32_t>(events.size()));
  for (const cache::cache_event& e : events) pack_event(pk, e);
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
  if (!options_.replay_endpoint.empty()) {
    replay_ = zmq_socket(context_, ZMQ_ROUTER);
    if (replay_ == nullptr || zmq_setsockopt(replay_, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(replay_, options_.replay_endpoint.c_str()) != 0) {
      const std::string why = zmq_strerror(zmq_errno());
      if (replay_) zmq_close(replay_);
      zmq_close(socket_);
      zmq_ctx_term(context_);
      throw std::runtime_error(fmt::format("kv_events.replay_endpoint: cannot bind '{}': {}",
                                           options_.replay_endpoint, why));
    }
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
  if (replay_) zmq_close(replay_);
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

namespace {

void big_endian(std::uint64_t v, unsigned char (&out)[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}

// One frame of a multipart message that has `more` after it.
std::string receive_frame(void* socket, bool& more) {
  zmq_msg_t m;
  zmq_msg_init(&m);
  std::string out;
  if (zmq_msg_recv(&m, socket, ZMQ_DONTWAIT) >= 0) {
    out.assign(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    more = zmq_msg_more(&m) != 0;
  } else {
    more = false;
  }
  zmq_msg_close(&m);
  return out;
}

}  // namespace

void kv_event_publisher::run() {
  for (;;) {
    batch b;
    {
      std::unique_lock<std::mutex> lock(m_);
      if (replay_) {  // a replay request waits at most this long behind an idle queue
        cv_.wait_for(lock, std::chrono::milliseconds(20),
                     [&] { return stop_ || !queue_.empty(); });
      } else {
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      }
      if (stop_ && queue_.empty()) return;  // stopped, everything sent
      if (!queue_.empty()) {
        b = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (!b.events.empty()) {
      std::string payload = encode_kv_event_batch(b.ts, b.events);
      unsigned char seq[8];
      big_endian(seq_, seq);
      // A PUB socket never blocks on send: past a subscriber's high-water mark it drops for it.
      zmq_send(socket_, options_.topic.data(), options_.topic.size(), ZMQ_SNDMORE);
      zmq_send(socket_, seq, sizeof seq, ZMQ_SNDMORE);
      zmq_send(socket_, payload.data(), payload.size(), 0);
      if (replay_ && options_.buffer_steps > 0) {
        if (sent_.size() == options_.buffer_steps) sent_.pop_front();
        sent_.emplace_back(seq_, std::move(payload));
      }
      ++seq_;
    }
    if (replay_) serve_replays();
  }
}

void kv_event_publisher::serve_replays() {
  for (;;) {
    std::vector<std::string> frames;
    bool more = true;
    while (more) {
      std::string f = receive_frame(replay_, more);
      if (frames.empty() && !more && f.empty()) return;  // nothing waiting
      frames.push_back(std::move(f));
    }
    // [identity, "", start_seq]; anything else is ignored (vLLM logs and drops it).
    if (frames.size() != 3 || !frames[1].empty() || frames[2].size() != 8) continue;
    std::uint64_t start = 0;
    for (unsigned char c : frames[2]) start = (start << 8) | c;
    const std::string& id = frames[0];
    for (const auto& [seq, payload] : sent_) {
      if (seq < start) continue;
      unsigned char s[8];
      big_endian(seq, s);
      zmq_send(replay_, id.data(), id.size(), ZMQ_SNDMORE);
      zmq_send(replay_, "", 0, ZMQ_SNDMORE);
      zmq_send(replay_, s, sizeof s, ZMQ_SNDMORE);
      zmq_send(replay_, payload.data(), payload.size(), 0);
    }
    const unsigned char end[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    zmq_send(replay_, id.data(), id.size(), ZMQ_SNDMORE);
    zmq_send(replay_, "", 0, ZMQ_SNDMORE);
    zmq_send(replay_, end, sizeof end, ZMQ_SNDMORE);
    zmq_send(replay_, "", 0, 0);
  }
}

}  // namespace courier::telemetry
