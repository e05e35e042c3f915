#include "tools/trace/trace_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

namespace courier::trace_tool {

namespace {

using nlohmann::json;

// Times are bounded (2^61 ns is 73 years) so that ts + dur, and the difference of any two
// starts or ends, never overflow int64.
constexpr std::int64_t max_abs_time_ns = std::int64_t{1} << 61;
constexpr std::int64_t max_u32 = std::numeric_limits<std::uint32_t>::max();

struct line_context {
  const std::string& origin;
  std::uint64_t line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw trace_error(fmt::format("{}:{}: {}", origin, line, what));
  }
};

std::int64_t get_int(const json& obj, const char* key, std::int64_t lo, std::int64_t hi,
                     const line_context& at) {
  const auto it = obj.find(key);
  if (it == obj.end()) at.fail(fmt::format("missing '{}'", key));
  if (!it->is_number_integer()) {
    at.fail(fmt::format("'{}' must be an integer, got {}", key, it->dump()));
  }
  const bool too_big =
      it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  const std::int64_t v = too_big ? hi : it->get<std::int64_t>();
  if (too_big || v < lo || v > hi) {
    at.fail(fmt::format("'{}' is out of range ({}..{}): {}", key, lo, hi, it->dump()));
  }
  return v;
}

const std::string& get_string(const json& obj, const char* key, const line_context& at) {
  const auto it = obj.find(key);
  if (it == obj.end()) at.fail(fmt::format("missing '{}'", key));
  if (!it->is_string()) at.fail(fmt::format("'{}' must be a string, got {}", key, it->dump()));
  return it->get_ref<const std::string&>();
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the id helps no one.
std::string parse_message(const json::exception& e) {
  const std::string what = e.what();
  const auto close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

class reader {
 public:
  reader(trace& out, std::ostream& warnings) : out_(out), warnings_(warnings) {}

  void header(const std::string& line, const line_context& at) {
    json h;
    try {
      h = json::parse(line);
    } catch (const json::exception& e) {
      at.fail(
          "not a courier-trace file: the first line must be the JSON header "
          "{\"format\":\"courier-trace\",\"version\":1,...} (" +
          parse_message(e) + ")");
    }
    const auto format = h.is_object() ? h.find("format") : h.end();
    if (!h.is_object() || format == h.end() || *format != "courier-trace") {
      at.fail(
          "not a courier-trace file: the first line must be the header "
          "{\"format\":\"courier-trace\",\"version\":1,...}");
    }
    const auto version = h.find("version");
    if (version == h.end() || !version->is_number_integer() || *version != 1) {
      at.fail(fmt::format("unsupported courier-trace version {} (this tool reads version 1)",
                          version == h.end() ? "(none)" : version->dump()));
    }
    // Every duration below is read as nanoseconds; another unit would silently scale them.
    const auto unit = h.find("unit");
    if (unit != h.end() && *unit != "ns") {
      at.fail(fmt::format("unsupported time unit {} (this tool reads \"ns\")", unit->dump()));
    }
    if (auto c = h.find("clock"); c != h.end() && c->is_string()) out_.header.clock = *c;
    if (auto m = h.find("model"); m != h.end() && m->is_string()) out_.header.model = *m;
    if (auto s = h.find("sample"); s != h.end() && s->is_number()) out_.header.sample = *s;
  }

  void record(const json& obj, const line_context& at) {
    if (!obj.is_object()) at.fail("expected a JSON object (a span, a drop or a label record)");
    if (obj.contains("dropped")) {
      out_.num_dropped += static_cast<std::uint64_t>(
          get_int(obj, "dropped", 0, std::numeric_limits<std::int64_t>::max(), at));
      return;
    }
    if (obj.contains("request_id")) {
      out_.request_ids[get_int(obj, "req", 0, std::numeric_limits<std::int64_t>::max(), at)] =
          get_string(obj, "request_id", at);
      return;
    }
    span s;
    s.actor = intern(get_string(obj, "actor", at), at);
    s.msg = intern(get_string(obj, "msg", at), at);
    s.ts_ns = get_int(obj, "ts", -max_abs_time_ns, max_abs_time_ns, at);
    s.dur_ns = get_int(obj, "dur", 0, max_abs_time_ns, at);
    s.tid = static_cast<std::uint32_t>(get_int(obj, "tid", 0, max_u32, at));
    for (field f : all_fields) {
      const char* key = field_name(f);
      if (!obj.contains(key)) continue;
      s.present |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(f));
      if (f == field::req) {
        s.req = get_int(obj, key, 0, std::numeric_limits<std::int64_t>::max(), at);
        continue;
      }
      const auto v = static_cast<std::uint32_t>(get_int(obj, key, 0, max_u32, at));
      switch (f) {
        case field::step:
          s.step = v;
          break;
        case field::rows:
          s.rows = v;
          break;
        case field::prefill:
          s.prefill = v;
          break;
        case field::decode:
          s.decode = v;
          break;
        case field::drafts:
          s.drafts = v;
          break;
        case field::accepted:
          s.accepted = v;
          break;
        case field::req:
          break;
      }
    }
    out_.spans.push_back(s);
  }

  void warn_truncated(const line_context& at) {
    warnings_ << fmt::format(
        "courier-trace: {}:{}: warning: skipped a truncated last line (is the file still being "
        "written?)\n",
        at.origin, at.line);
    ++out_.num_skipped_lines;
  }

 private:
  std::uint16_t intern(const std::string& text, const line_context& at) {
    const auto it = ids_.find(text);
    if (it != ids_.end()) return it->second;
    if (out_.names.size() > std::numeric_limits<std::uint16_t>::max()) {
      at.fail("more than 65536 distinct actor and message names");
    }
    const auto id = static_cast<std::uint16_t>(out_.names.size());
    out_.names.push_back(text);
    ids_.emplace(text, id);
    return id;
  }

  trace& out_;
  std::ostream& warnings_;
  std::unordered_map<std::string, std::uint16_t> ids_;
};

}  // namespace

const char* field_name(field f) {
  switch (f) {
    case field::req:
      return "req";
    case field::step:
      return "step";
    case field::rows:
      return "rows";
    case field::prefill:
      return "prefill";
    case field::decode:
      return "decode";
    case field::drafts:
      return "drafts";
    case field::accepted:
      return "accepted";
  }
  return "?";
}

std::int64_t span::get(field f) const {
  switch (f) {
    case field::req:
      return req;
    case field::step:
      return step;
    case field::rows:
      return rows;
    case field::prefill:
      return prefill;
    case field::decode:
      return decode;
    case field::drafts:
      return drafts;
    case field::accepted:
      return accepted;
  }
  return 0;
}

std::optional<std::uint16_t> trace::find_name(std::string_view text) const {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<std::uint16_t>(i);
  }
  return std::nullopt;
}

span_kind trace::kind(std::string_view actor, std::string_view msg) const {
  return span_kind{find_name(actor), find_name(msg)};
}

std::int64_t trace::begin_ns() const {
  return spans.empty() ? 0 : spans.front().ts_ns;
}

std::int64_t trace::end_ns() const {
  std::int64_t end = begin_ns();
  for (const span& s : spans) end = std::max(end, s.end_ns());
  return end;
}

trace read_trace(std::istream& in, const std::string& origin, std::ostream& warnings,
                 std::uintmax_t size_bytes) {
  trace out;
  out.origin = origin;
  reader r(out, warnings);
  line_context at{origin};
  std::string line;  // reused: one line in memory at a time
  while (std::getline(in, line)) {
    ++at.line;
    // getline sets eof only when the line had no '\n': the writer may be mid-line there.
    const bool unterminated = in.eof();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (at.line == 1) {
      r.header(line, at);
      // Sized once the file is known to be a trace. The shortest span line the server
      // writes is about 75 bytes.
      out.spans.reserve(static_cast<std::size_t>(size_bytes / 75));
      continue;
    }
    if (is_blank(line)) continue;
    json obj;
    try {
      obj = json::parse(line);
    } catch (const json::exception& e) {
      if (unterminated) {
        r.warn_truncated(at);
        break;
      }
      at.fail("malformed JSON: " + parse_message(e));
    }
    r.record(obj, at);
  }
  if (in.bad()) throw trace_error(origin + ": read error");
  if (at.line == 0) {
    throw trace_error(origin + ": empty file, expected the courier-trace header on line 1");
  }
  std::sort(out.spans.begin(), out.spans.end(), [](const span& a, const span& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.dur_ns != b.dur_ns) return a.dur_ns > b.dur_ns;
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.actor != b.actor) return a.actor < b.actor;
    return a.msg < b.msg;
  });
  return out;
}

trace read_trace_file(const std::string& path, std::ostream& warnings) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw trace_error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw trace_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return read_trace(in, path, warnings, ec ? 0 : size);
}

std::vector<std::uint16_t> actors_in_display_order(const trace& t) {
  static const std::array<const char*, 4> known = {"admission", "scheduler", "engine", "telemetry"};
  std::vector<bool> seen(t.names.size(), false);
  for (const span& s : t.spans) seen[s.actor] = true;
  std::vector<std::uint16_t> out;
  for (const char* name : known) {
    const auto id = t.find_name(name);
    if (id && seen[*id]) out.push_back(*id);
  }
  std::vector<std::uint16_t> others;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto id = static_cast<std::uint16_t>(i);
    if (seen[i] && std::find(out.begin(), out.end(), id) == out.end()) others.push_back(id);
  }
  std::sort(others.begin(), others.end(),
            [&](std::uint16_t a, std::uint16_t b) { return t.name(a) < t.name(b); });
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

std::string format_fields(const span& s) {
  std::string out;
  for (field f : all_fields) {
    if (!s.has(f)) continue;
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", field_name(f), s.get(f));
  }
  return out;
}

}  // namespace courier::trace_tool
