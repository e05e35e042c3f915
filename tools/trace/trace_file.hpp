#pragma once
// Reading a courier actor-trace file (JSON Lines written by the telemetry actor) into a compact,
// time-sorted table of spans. Every error is a trace_error whose message starts with
// "FILE:LINE: " (or "FILE: " when no line applies), so the command line can print it as is.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace courier::trace_tool {

class trace_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The optional integer fields a span may carry. A line without one means "none", which is why
// span::present records which were there rather than relying on 0.
enum class field : std::uint8_t { req, step, rows, prefill, decode, drafts, accepted };
inline constexpr std::array<field, 7> all_fields = {field::req,     field::step,   field::rows,
                                                    field::prefill, field::decode, field::drafts,
                                                    field::accepted};
const char* field_name(field f);

// One span, 64 bytes: names are interned so that a 1-GB trace fits in memory as a table.
struct span {
  std::int64_t ts_ns = 0;   // start on the server's steady clock
  std::int64_t dur_ns = 0;  // >= 0; 0 for instantaneous records such as scheduler "row"
  std::int64_t req = 0;     // request id, meaningful when has(field::req)
  std::uint32_t step = 0;
  std::uint32_t rows = 0;
  std::uint32_t prefill = 0;
  std::uint32_t decode = 0;
  std::uint32_t drafts = 0;
  std::uint32_t accepted = 0;
  std::uint32_t tid = 0;     // the server's small thread number
  std::uint16_t actor = 0;   // index into trace::names
  std::uint16_t msg = 0;     // index into trace::names
  std::uint8_t present = 0;  // bit (1 << field) set for each optional field the line had

  std::int64_t end_ns() const { return ts_ns + dur_ns; }
  bool has(field f) const { return (present >> static_cast<unsigned>(f)) & 1u; }
  std::int64_t get(field f) const;
};

struct trace_header {
  std::string clock;  // informational ("steady")
  std::string model;
  double sample = 1.0;  // fraction of spans the server kept
};

// Matches spans of one (actor, msg) pair; a name the trace never saw matches nothing.
struct span_kind {
  std::optional<std::uint16_t> actor;
  std::optional<std::uint16_t> msg;
  bool matches(const span& s) const { return actor && msg && s.actor == *actor && s.msg == *msg; }
};

// Invariants: spans are sorted by ts, then longer first (a parent before the children it
// contains), then by tid; every span's actor and msg index names; ts and dur lie within
// +-2^61 so that ts + dur, and differences of them, never overflow.
struct trace {
  std::string origin;  // the file name, for messages and titles
  trace_header header;
  std::vector<std::string> names;  // interned actor and message names
  std::vector<span> spans;
  std::uint64_t num_dropped = 0;        // sum of {"dropped":N} records
  // {"req":N,"request_id":"..."} records: request N's HTTP id (x-request-id).
  std::map<std::int64_t, std::string> request_ids;
  std::uint64_t num_skipped_lines = 0;  // a truncated last line, skipped with a warning

  const std::string& name(std::uint16_t id) const { return names[id]; }
  std::optional<std::uint16_t> find_name(std::string_view text) const;
  span_kind kind(std::string_view actor, std::string_view msg) const;
  std::int64_t begin_ns() const;  // earliest start; 0 when there are no spans
  std::int64_t end_ns() const;    // latest end; 0 when there are no spans
};

// Reads a whole trace. `origin` names the source in errors; warnings (a truncated last line)
// go to `warnings`. `size_bytes`, when known, sizes the span table up front, so that a large
// file is not copied as the table doubles. Throws trace_error.
trace read_trace(std::istream& in, const std::string& origin, std::ostream& warnings,
                 std::uintmax_t size_bytes = 0);
trace read_trace_file(const std::string& path, std::ostream& warnings);

// The actors seen in the trace in display order: admission, scheduler, engine, telemetry, then
// any others by name.
std::vector<std::uint16_t> actors_in_display_order(const trace& t);

// "req=3 step=7 prefill=128": the optional fields present on a span, in field order.
std::string format_fields(const span& s);

}  // namespace courier::trace_tool
