#pragma once
// The telemetry actor's typed handle and nothing else: what the scheduler and admission include
// to report and scrape, without Prometheus or the trace writer (telemetry_actor.hpp).
#include <caf/typed_actor.hpp>

#include <string>

#include "messages/type_ids.hpp"

namespace courier::actors {

using telemetry_actor = caf::typed_actor<
    // What happened in the scheduler since its previous report.
    caf::reacts_to<msg::telemetry_report>,
    // What a request sent that courier ignored (counted by field name, logged once each).
    caf::reacts_to<msg::admission_report>,
    // A traced request's HTTP id (a line of the trace file).
    caf::reacts_to<msg::request_label>,
    // The metrics in the Prometheus text format (empty when metrics are off).
    caf::replies_to<msg::scrape_atom>::with<std::string>,
    // Drain the trace buffers into the trace file (also sent to itself on a timer).
    caf::reacts_to<msg::flush_atom>>;

}  // namespace courier::actors
