#pragma once
// One request and its response on a connection: the state the connection (which drives it on
// the I/O thread) and the response_writer handed to the handler (any thread) share.
//
//   open ──response written──▶ finished       (disconnect callbacks dropped, never run)
//     │
//     └──client gone first───▶ gone           (disconnect callbacks run once)
//
// Invariants: the state leaves `open` once and only on the I/O thread; callbacks are touched
// only on the I/O thread; no callback is held once the state is not `open` (a callback
// usually holds the writer, which holds this: holding it longer would be a cycle).
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/admission/http/server.hpp"

namespace courier::http {

enum class exchange_state { open, finished, gone };

class exchange {
 public:
  exchange_state state() const { return state_.load(std::memory_order_acquire); }

  // I/O thread only.
  // Runs fn now if gone; drops it if finished; keeps it otherwise.
  void add_disconnect_callback(std::function<void()> fn);
  // The response is completely written: the callbacks are dropped unrun.
  void finish();
  // The client went away first: the callbacks run once, in the order they were added.
  void mark_gone();

 private:
  std::atomic<exchange_state> state_{exchange_state::open};
  std::vector<std::function<void()>> disconnect_callbacks_;
};

using headers = header_list;

// What the writer asks of the connection; called on the I/O thread. A call about an exchange
// that is not the connection's current one, or out of order (see response_encoder), is ignored.
class exchange_sink {
 public:
  virtual ~exchange_sink() = default;
  virtual void send(const std::shared_ptr<exchange>& ex, int status, std::string content_type,
                    std::string body, headers extra) = 0;
  virtual void start_stream(const std::shared_ptr<exchange>& ex, int status,
                            std::string content_type, headers extra) = 0;
  virtual void write_chunk(const std::shared_ptr<exchange>& ex, std::string data) = 0;
  virtual void end_stream(const std::shared_ptr<exchange>& ex) = 0;
};

}  // namespace courier::http
