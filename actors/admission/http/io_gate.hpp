#pragma once
// The one way other threads reach the I/O thread: a post that fails, instead of touching a
// dead io_context, once the server has stopped. Writers hold it by shared_ptr, so it outlives
// the server; the server closes it before its io_context goes.
#include <functional>
#include <mutex>

namespace boost::asio {
class io_context;
}

namespace courier::http {

class io_gate {
 public:
  explicit io_gate(boost::asio::io_context& ioc) : ioc_(&ioc) {}

  // Queues fn to run on the I/O thread; false (and fn dropped) once closed.
  [[nodiscard]] bool post(std::function<void()> fn);
  // True on the thread running the io_context, while the gate is open.
  bool on_io_thread() const;
  // Called by the server on the I/O thread when it no longer accepts work.
  void close();

 private:
  mutable std::mutex mutex_;
  boost::asio::io_context* ioc_;  // Borrowed from the server; null once closed
};

}  // namespace courier::http
