#include "tools/bench/stream_request.hpp"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "tools/bench/sse_parser.hpp"

namespace courier::bench_tool {
namespace {

constexpr std::size_t max_error_body_bytes = 64 * 1024;

struct stream_state {
  request_record record;
  api_kind api = api_kind::completions;
  run_clock now_s;
  int status = 0;
  std::string error_body;  // a non-200 body, to quote its message
  sse_parser parser;
  std::vector<sse_event> events;
  std::string stream_error;
  bool done_seen = false;

  void on_bytes(std::string_view bytes) {
    if (status != 200) {
      const std::size_t room =
          max_error_body_bytes - std::min(max_error_body_bytes, error_body.size());
      error_body.append(bytes.substr(0, room));
      return;
    }
    const double t = now_s();  // every event completed by these bytes arrived now
    events.clear();
    parser.feed(bytes, events);
    for (const sse_event& e : events) on_event(e, t);
  }

  void on_event(const sse_event& e, double t) {
    if (done_seen) return;
    const stream_item item = parse_stream_data(e.data, api);
    if (item.error) {
      if (stream_error.empty()) stream_error = *item.error;
      return;
    }
    if (item.done) {
      done_seen = true;
      return;
    }
    if (item.content) {
      record.chunk_s.push_back(t);
      record.generated_bytes += item.text.size();
      record.output_ids.insert(record.output_ids.end(), item.token_ids.begin(),
                               item.token_ids.end());
    }
    if (item.usage) {
      record.usage_seen = true;
      record.prompt_tokens = item.usage->prompt_tokens;
      record.completion_tokens = item.usage->completion_tokens;
      record.cached_tokens = item.usage->cached_tokens;
    }
  }

  std::string failure(const std::string& transport_error) const {
    if (status != 0 && status != 200) {
      return fmt::format("HTTP {}: {}", status, error_message(error_body));
    }
    if (!transport_error.empty()) return transport_error;
    if (!stream_error.empty()) return "stream error: " + stream_error;
    if (!done_seen) return "stream ended without [DONE]";
    if (record.chunk_s.empty()) return "no content chunk";
    return "";
  }
};

}  // namespace

void start_stream_request(boost::asio::io_context& io, const endpoint_list& endpoints,
                          const client_config& config, const bench_request& request,
                          const run_clock& now_s, std::function<void(request_record)> done) {
  auto st = std::make_shared<stream_state>();
  st->api = api_for_endpoint(config.endpoint);
  st->now_s = now_s;
  st->record.client_input_len = request.input_len;
  st->record.output_len_requested = request.output_len;

  http_call call;
  call.target = config.url.target(config.endpoint);
  call.host_header = config.url.host_header();
  call.body = request_body(request, config.body, st->api);
  call.api_key = config.api_key;
  call.timeout_s = config.timeout_s;

  http_handlers h;
  h.on_status = [st](int status) { st->status = status; };
  h.on_body = [st](std::string_view bytes) { st->on_bytes(bytes); };
  h.on_done = [st, done = std::move(done)](const std::string& transport_error) {
    st->record.end_s = st->now_s();
    st->record.error = st->failure(transport_error);
    st->record.success = st->record.error.empty();
    done(std::move(st->record));
  };
  // The send time is taken after the body is built, just before connecting (vLLM's
  // st = perf_counter() before session.post).
  st->record.send_s = now_s();
  start_http_call(io, endpoints, std::move(call), std::move(h));
}

}  // namespace courier::bench_tool
