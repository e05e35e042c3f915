#pragma once
// Requests run together through the server against each run alone (generate_one on the sim,
// submit_reference.hpp): the integration tests' usual check, for features that must not change
// what a request gives.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

namespace courier::test {

struct alone_outputs {
  std::vector<msg::submit> requests;
  std::map<msg::request_id, reference_output> tokens;
};

inline alone_outputs outputs_alone(const std::string& model_name,
                                   std::vector<msg::submit> requests) {
  alone_outputs x;
  x.requests = std::move(requests);
  x.tokens = references_for(model_name, x.requests);
  return x;
}

// Submits every request to a server made from `cfg`, checks each ran to its length with the
// tokens it gives alone and that every KV block came back; returns the scheduler's stats.
inline msg::scheduler_stats run_and_compare_alone(const config::server_config& cfg,
                                                  const alone_outputs& want) {
  harness h(cfg);
  for (const auto& s : want.requests) h.submit(s);
  auto& got = h.wait_all();
  for (const auto& s : want.requests) {
    const msg::sampling_params& p = s.sampling;
    INFO("request " << s.id << ": " << s.prompt.size() << "-token prompt, temperature "
                    << p.temperature << ", penalties " << p.repetition_penalty << "/"
                    << p.presence_penalty << "/" << p.frequency_penalty);
    const auto& o = got.at(s.id);
    CHECK(o.last.finish == msg::finish_reason::length);
    CHECK(mismatch(o.tokens, want.tokens.at(s.id)) == "");
  }
  const msg::scheduler_stats st = h.stats();
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  return st;
}

}  // namespace courier::test
