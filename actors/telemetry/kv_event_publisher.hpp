#pragma once
// The prefix cache's events (cache/cache_events.hpp) on a ZeroMQ PUB socket, in vLLM's published
// format, so that routers written for vLLM (llm-d's KV-cache manager, SGLang's router, Dynamo's
// ZMQ relay) can follow courier replicas too (config: kv_events.endpoint, kv_events.topic).
//
// Each batch the scheduler hands over after a step is one message of three frames: the topic,
// an 8-byte big-endian sequence number (0, 1, 2, ... per publisher), and the msgpack of vLLM's
// KVEventBatch as msgspec writes it (array_like structs, tagged events):
//   [ts, [event, ...]]                  ts: seconds since the epoch, a float
//   ["BlockStored", [hash, ...], parent_hash | nil, [token, ...], block_size, lora_id | nil,
//    medium]
//   ["BlockRemoved", [hash, ...], medium]
//   ["AllBlocksCleared"]
// Hashes are courier's chain hashes (cache/block_hash.hpp, unsigned 64-bit), which name the
// namespace (adapter, tenant) and every token up to the block's end; a router that keys on its
// own hash recomputes it from token_ids and the parent chain, as vLLM's routers do. lora_id: the
// adapter's id in the scheduler (nil: the base model). medium: "GPU" (the device's prefix
// cache), "CPU" (the KV host tier) or "DISK" (the disk tier); the tiers' BlockStored events name
// their blocks by hash only (parent nil, no tokens, lora nil), as vLLM's offloading connector's.
//
// A thread of its own encodes and sends, so the scheduler only moves its log over. A PUB socket
// drops messages for a subscriber past its high-water mark instead of blocking; a subscriber
// sees the gap in the sequence numbers and asks the replay socket (replay_endpoint, a ROUTER,
// vLLM's protocol) for what it missed: the request [identity, "", start_seq (8 bytes, big
// endian)] is answered with [identity, "", seq, payload] for every batch still kept (the last
// buffer_steps) from start_seq on, then the end marker [identity, "", 0xff x 8, ""].
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "cache/cache_events.hpp"

namespace courier::telemetry {

struct kv_event_options {
  std::string endpoint;      // a ZeroMQ endpoint to bind: tcp://*:5557, ipc:///run/x.sock
  std::string topic;         // the first frame of every message ("" as vLLM's default)
  std::string replay_endpoint;     // a ROUTER to bind for replays; empty: none
  std::size_t buffer_steps = 10000;  // batches kept for replay (vLLM's default)
};

// The msgpack bytes of one batch (the third frame), as the header describes.
std::string encode_kv_event_batch(double ts, const cache::cache_event_log& events);

class kv_event_publisher {
 public:
  // Binds the socket; std::runtime_error naming kv_events.endpoint when it cannot.
  explicit kv_event_publisher(kv_event_options options);
  ~kv_event_publisher();  // sends what is queued, then closes
  kv_event_publisher(const kv_event_publisher&) = delete;
  kv_event_publisher& operator=(const kv_event_publisher&) = delete;

  // Queues one batch (stamped now); an empty one is not sent.
  void publish(cache::cache_event_log events);

 private:
  struct batch {
    double ts = 0;
    cache::cache_event_log events;
  };
  void run();
  void serve_replays();  // answers every replay request waiting (the thread's)

  kv_event_options options_;
  void* context_ = nullptr;  // zmq context and PUB socket, used by thread_ only once it runs
  void* socket_ = nullptr;
  void* replay_ = nullptr;  // ROUTER, or null
  std::deque<std::pair<std::uint64_t, std::string>> sent_;  // the last batches, for replays
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<batch> queue_;
  bool stop_ = false;
  std::uint64_t seq_ = 0;
  std::thread thread_;
};

}  // namespace courier::telemetry
