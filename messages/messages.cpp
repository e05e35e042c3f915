#include "messages/messages.hpp"

#include "messages/inspect_check.hpp"
#include "messages/type_ids.hpp"

// Every message's inspect() lists every field, and so does every inspected struct a message
// holds: a compile error names the struct that leaves one out.
static_assert(courier::msg::inspect_lists_every_field<caf::id_block::courier_messages>());

namespace courier::msg {

const char* to_string(finish_reason r) {
  switch (r) {
    case finish_reason::none: return "none";
    case finish_reason::stop: return "stop";
    case finish_reason::length: return "length";
    case finish_reason::cancelled: return "cancelled";
    case finish_reason::error: return "error";
  }
  return "?";
}

const char* to_string(error_code c) {
  switch (c) {
    case error_code::none: return "none";
    case error_code::invalid_request: return "invalid_request";
    case error_code::too_long: return "too_long";
    case error_code::overloaded: return "overloaded";
    case error_code::engine_failure: return "engine_failure";
    case error_code::shutting_down: return "shutting_down";
  }
  return "?";
}

const char* to_string(cancel_reason r) {
  switch (r) {
    case cancel_reason::client_gone: return "client_gone";
    case cancel_reason::stop_string: return "stop_string";
  }
  return "?";
}

}  // namespace courier::msg
