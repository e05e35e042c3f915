#pragma once
// The one type-ID block of courier's messages. Register with
// cfg.add_message_types<caf::id_block::courier_messages>().
#include <caf/type_id.hpp>

#include "messages/cluster.hpp"
#include "messages/disk.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"
#include "messages/telemetry.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(courier_messages, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::submit))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::cancel))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::token_event))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::step_plan))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::step_result))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::engine_ready))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::scheduler_stats))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::telemetry_report))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::admission_report))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::request_label))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::submit_batch))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::submit_ack))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::disk_batch))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::disk_done))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::disk_deadline))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::copies_wait))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::copies_done))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::lora_change))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::lora_ack))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::cache_event_msg))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::cache_update))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::watch_cache))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::replica_update))
  CAF_ADD_TYPE_ID(courier_messages, (courier::msg::replica_back))
  CAF_ADD_ATOM(courier_messages, courier::msg, stats_atom, "stats")
  CAF_ADD_ATOM(courier_messages, courier::msg, ready_atom, "ready")
  CAF_ADD_ATOM(courier_messages, courier::msg, drain_atom, "drain")
  CAF_ADD_ATOM(courier_messages, courier::msg, scrape_atom, "scrape")
  CAF_ADD_ATOM(courier_messages, courier::msg, flush_atom, "flush")
  CAF_ADD_ATOM(courier_messages, courier::msg, step_done_atom, "stepdone")
  CAF_ADD_ATOM(courier_messages, courier::msg, copies_done_atom, "copiesdone")
  CAF_ADD_ATOM(courier_messages, courier::msg, lora_parsed_atom, "loraparsed")
  CAF_ADD_ATOM(courier_messages, courier::msg, lora_timeout_atom, "loratimout")
  CAF_ADD_ATOM(courier_messages, courier::msg, heartbeat_atom, "heartbeat")
CAF_END_TYPE_ID_BLOCK(courier_messages)
