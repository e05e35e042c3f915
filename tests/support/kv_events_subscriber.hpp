#pragma once
// A subscriber to courier's KV-cache events written as vLLM's routers read them: a ZeroMQ SUB
// socket, three frames per message (topic, 8-byte big-endian sequence number, payload), and the
// payload decoded strictly against vLLM's KVEventBatch schema (msgspec's array_like, tagged
// structs): any other shape or type throws, as msgspec's decoder would refuse it.
#include <msgpack.hpp>
#include <zmq.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace courier::test {

struct decoded_event {
  std::string tag;  // BlockStored, BlockRemoved, AllBlocksCleared
  std::vector<std::uint64_t> hashes;
  std::optional<std::uint64_t> parent;
  std::vector<std::uint32_t> tokens;
  std::uint32_t block_size = 0;
  std::optional<std::uint32_t> lora_id;
  std::string medium;
};

struct decoded_batch {
  double ts = 0;
  std::vector<decoded_event> events;
};

inline void expect(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("KV event batch: ") + what);
}

inline std::vector<std::uint64_t> decode_hashes(const msgpack::object& o) {
  expect(o.type == msgpack::type::ARRAY, "block_hashes is not an array");
  std::vector<std::uint64_t> out;
  for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
    expect(o.via.array.ptr[i].type == msgpack::type::POSITIVE_INTEGER, "a hash is not an int");
    out.push_back(o.via.array.ptr[i].via.u64);
  }
  return out;
}

inline std::string decode_str(const msgpack::object& o, const char* what) {
  expect(o.type == msgpack::type::STR, what);
  return std::string(o.via.str.ptr, o.via.str.size);
}

inline decoded_batch decode_batch(const std::string& bytes) {
  const msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& root = h.get();
  expect(root.type == msgpack::type::ARRAY && root.via.array.size == 2, "not [ts, events]");
  const msgpack::object& ts = root.via.array.ptr[0];
  expect(ts.type == msgpack::type::FLOAT64 || ts.type == msgpack::type::FLOAT32, "ts not a float");
  decoded_batch b;
  b.ts = ts.via.f64;
  const msgpack::object& events = root.via.array.ptr[1];
  expect(events.type == msgpack::type::ARRAY, "events is not an array");
  for (std::uint32_t i = 0; i < events.via.array.size; ++i) {
    const msgpack::object& e = events.via.array.ptr[i];
    expect(e.type == msgpack::type::ARRAY && e.via.array.size >= 1, "an event is not an array");
    const msgpack::object* f = e.via.array.ptr;
    decoded_event d;
    d.tag = decode_str(f[0], "an event's tag is not a string");
    if (d.tag == "BlockStored") {
      expect(e.via.array.size == 7, "BlockStored has not 7 fields");
      d.hashes = decode_hashes(f[1]);
      if (f[2].type != msgpack::type::NIL) {
        expect(f[2].type == msgpack::type::POSITIVE_INTEGER, "parent_block_hash");
        d.parent = f[2].via.u64;
      }
      expect(f[3].type == msgpack::type::ARRAY, "token_ids is not an array");
      for (std::uint32_t t = 0; t < f[3].via.array.size; ++t) {
        expect(f[3].via.array.ptr[t].type == msgpack::type::POSITIVE_INTEGER, "a token id");
        d.tokens.push_back(static_cast<std::uint32_t>(f[3].via.array.ptr[t].via.u64));
      }
      expect(f[4].type == msgpack::type::POSITIVE_INTEGER, "block_size");
      d.block_size = static_cast<std::uint32_t>(f[4].via.u64);
      if (f[5].type != msgpack::type::NIL) {
        expect(f[5].type == msgpack::type::POSITIVE_INTEGER, "lora_id");
        d.lora_id = static_cast<std::uint32_t>(f[5].via.u64);
      }
      d.medium = decode_str(f[6], "medium");
    } else if (d.tag == "BlockRemoved") {
      expect(e.via.array.size == 3, "BlockRemoved has not 3 fields");
      d.hashes = decode_hashes(f[1]);
      d.medium = decode_str(f[2], "medium");
    } else {
      expect(d.tag == "AllBlocksCleared" && e.via.array.size == 1, "an unknown event");
    }
    b.events.push_back(std::move(d));
  }
  return b;
}

// One message: its three frames, the payload decoded.
struct kv_message {
  std::string topic;
  std::uint64_t seq = 0;
  decoded_batch batch;
};

class kv_subscriber {
 public:
  explicit kv_subscriber(const std::string& endpoint)
      : ctx_(zmq_ctx_new()), sock_(zmq_socket(ctx_, ZMQ_SUB)) {
    zmq_setsockopt(sock_, ZMQ_SUBSCRIBE, "", 0);  // every topic
    if (zmq_connect(sock_, endpoint.c_str()) != 0) {
      throw std::runtime_error("kv_subscriber: cannot connect to " + endpoint);
    }
  }
  ~kv_subscriber() {
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
  }
  kv_subscriber(const kv_subscriber&) = delete;
  kv_subscriber& operator=(const kv_subscriber&) = delete;

  // The next message, or nothing within timeout_ms.
  std::optional<kv_message> receive(int timeout_ms) {
    zmq_setsockopt(sock_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    std::vector<std::string> frames;
    for (;;) {
      zmq_msg_t m;
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, sock_, 0) < 0) {
        zmq_msg_close(&m);
        if (frames.empty()) return std::nullopt;
        throw std::runtime_error("kv_subscriber: a message ended early");
      }
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
      const bool more = zmq_msg_more(&m) != 0;
      zmq_msg_close(&m);
      if (!more) break;
    }
    expect(frames.size() == 3, "a message is not 3 frames (topic, seq, payload)");
    expect(frames[1].size() == 8, "the sequence number is not 8 bytes");
    kv_message out;
    out.topic = frames[0];
    for (unsigned char c : frames[1]) out.seq = (out.seq << 8) | c;
    out.batch = decode_batch(frames[2]);
    return out;
  }

 private:
  void* ctx_;
  void* sock_;
};

// A vLLM-style replay client: a DEALER sends ["", start_seq] to the ROUTER and reads
// ["", seq, payload] messages until the end marker (seq 0xff x 8, empty payload).
struct kv_replay_client {
  void* ctx = zmq_ctx_new();
  void* sock = zmq_socket(ctx, ZMQ_DEALER);
  explicit kv_replay_client(const std::string& endpoint) {
    const int linger = 0, timeout_ms = 5000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_connect(sock, endpoint.c_str());
  }
  ~kv_replay_client() {
    zmq_close(sock);
    zmq_ctx_term(ctx);
  }
  std::vector<std::string> frames() {
    std::vector<std::string> out;
    int more = 1;
    while (more) {
      zmq_msg_t m;
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, sock, 0) < 0) {
        zmq_msg_close(&m);
        break;  // timed out
      }
      out.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
      more = zmq_msg_more(&m);
      zmq_msg_close(&m);
    }
    return out;
  }
  // The (seq, payload) pairs replayed from `start`, and whether the end marker came.
  std::vector<std::pair<std::uint64_t, std::string>> replay(std::uint64_t start, bool& ended) {
    unsigned char s[8];
    for (int i = 0; i < 8; ++i) s[i] = static_cast<unsigned char>(start >> (56 - 8 * i));
    zmq_send(sock, "", 0, ZMQ_SNDMORE);
    zmq_send(sock, s, sizeof s, 0);
    std::vector<std::pair<std::uint64_t, std::string>> out;
    ended = false;
    for (;;) {
      const std::vector<std::string> f = frames();
      if (f.size() != 3 || !f[0].empty() || f[1].size() != 8) break;
      if (f[1] == std::string(8, '\xff')) {
        ended = f[2].empty();
        break;
      }
      std::uint64_t seq = 0;
      for (unsigned char c : f[1]) seq = (seq << 8) | c;
      out.emplace_back(seq, f[2]);
    }
    return out;
  }
};

}  // namespace courier::test
