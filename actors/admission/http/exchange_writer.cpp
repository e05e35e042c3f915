#include "actors/admission/http/exchange_writer.hpp"

#include <utility>

namespace courier::http {

exchange_writer::exchange_writer(std::shared_ptr<io_gate> gate, std::weak_ptr<exchange_sink> sink,
                                 std::shared_ptr<exchange> ex, std::string request_id)
    : gate_(std::move(gate)),
      sink_(std::move(sink)),
      exchange_(std::move(ex)),
      request_id_(std::move(request_id)) {}

template <class Op>
void exchange_writer::post_to_sink(Op op) {
  // The weak_ptr is locked on the I/O thread, never here: a strong reference taken here could
  // end up destroying the connection (and its socket) on this thread after the io_context.
  // A failed post means the server has stopped: there is nobody left to write to.
  (void)gate_->post([sink = sink_, ex = exchange_, op = std::move(op)]() mutable {
    if (auto s = sink.lock()) op(*s, ex);
  });
}

void exchange_writer::send(int status, std::string content_type, std::string body,
                           header_list extra_headers) {
  post_to_sink([status, content_type = std::move(content_type), body = std::move(body),
                extra = std::move(extra_headers)](exchange_sink& s,
                                                  const std::shared_ptr<exchange>& ex) mutable {
    s.send(ex, status, std::move(content_type), std::move(body), std::move(extra));
  });
}

void exchange_writer::start_stream(int status, std::string content_type,
                                   header_list extra_headers) {
  post_to_sink([status, content_type = std::move(content_type),
                extra = std::move(extra_headers)](exchange_sink& s,
                                                  const std::shared_ptr<exchange>& ex) mutable {
    s.start_stream(ex, status, std::move(content_type), std::move(extra));
  });
}

void exchange_writer::write_chunk(std::string data) {
  post_to_sink(
      [data = std::move(data)](exchange_sink& s, const std::shared_ptr<exchange>& ex) mutable {
        s.write_chunk(ex, std::move(data));
      });
}

void exchange_writer::end_stream() {
  post_to_sink([](exchange_sink& s, const std::shared_ptr<exchange>& ex) { s.end_stream(ex); });
}

void exchange_writer::on_disconnect(std::function<void()> fn) {
  if (gate_->on_io_thread()) {
    exchange_->add_disconnect_callback(std::move(fn));
    return;
  }
  auto registration = [ex = exchange_, fn]() mutable {
    ex->add_disconnect_callback(std::move(fn));
  };
  if (gate_->post(std::move(registration))) return;
  // No I/O thread any more. Stopping closed every connection first, so an exchange is either
  // finished (fn is never due) or gone (fn is due now, and this is the only thread left to run it).
  if (exchange_->state() != exchange_state::finished) fn();
}

bool exchange_writer::disconnected() const {
  return exchange_->state() == exchange_state::gone;
}

}  // namespace courier::http
