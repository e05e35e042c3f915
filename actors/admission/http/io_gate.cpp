#include "actors/admission/http/io_gate.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace courier::http {

bool io_gate::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ioc_ == nullptr) return false;
  boost::asio::post(*ioc_, std::move(fn));
  return true;
}

bool io_gate::on_io_thread() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ioc_ != nullptr && ioc_->get_executor().running_in_this_thread();
}

void io_gate::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  ioc_ = nullptr;
}

}  // namespace courier::http
