#pragma once
// The response_writer handed to the handler: it carries each call to the I/O thread, where the
// connection (an exchange_sink) acts on it. It holds the connection weakly and the I/O thread
// through an io_gate, so it stays safe to call after the connection or the server is gone.
#include <memory>

#include "actors/admission/http/exchange.hpp"
#include "actors/admission/http/io_gate.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::http {

class exchange_writer final : public response_writer {
 public:
  exchange_writer(std::shared_ptr<io_gate> gate, std::weak_ptr<exchange_sink> sink,
                  std::shared_ptr<exchange> ex, std::string request_id = {});

  void send(int status, std::string content_type, std::string body,
            header_list extra_headers) override;
  void start_stream(int status, std::string content_type, header_list extra_headers) override;
  void write_chunk(std::string data) override;
  void end_stream() override;
  void on_disconnect(std::function<void()> fn) override;
  bool disconnected() const override;
  std::string request_id() const override { return request_id_; }

 private:
  // Runs op(sink) on the I/O thread if the connection is still there by then.
  template <class Op>
  void post_to_sink(Op op);

  std::shared_ptr<io_gate> gate_;       // Shared with the server and the other writers
  std::weak_ptr<exchange_sink> sink_;   // The connection; locked only on the I/O thread
  std::shared_ptr<exchange> exchange_;  // Shared with the connection
  std::string request_id_;
};

}  // namespace courier::http
