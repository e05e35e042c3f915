#include "tools/trace/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "tools/trace/request_phases.hpp"

namespace courier::trace_tool {

namespace {

double us(double ns) {
  return ns / 1e3;
}
double ms(double ns) {
  return ns / 1e6;
}

std::string duration_range_label(const bucket& b) {
  return fmt::format("[{}, {})", duration_label(b.lo), duration_label(b.hi));
}

void write_messages(const trace& t, std::ostream& out) {
  out << "Spans by actor and message (total in ms; mean, p50, p99, max in us)\n";
  out << fmt::format("  {:<10} {:<14} {:>9} {:>12} {:>11} {:>11} {:>11} {:>11}\n", "actor",
                     "message", "count", "total_ms", "mean_us", "p50_us", "p99_us", "max_us");
  for (const message_stats& m : compute_message_stats(t)) {
    const distribution& d = m.dur_ns;
    out << fmt::format("  {:<10} {:<14} {:>9} {:>12.3f} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f}\n",
                       m.actor, m.msg, d.count, ms(static_cast<double>(d.total)), us(d.mean),
                       us(static_cast<double>(d.p50)), us(static_cast<double>(d.p99)),
                       us(static_cast<double>(d.max)));
  }
}

void write_steps(const trace& t, std::ostream& out) {
  const span_kind step_plan = t.kind("engine", "step_plan");
  std::vector<std::int64_t> durations, rows, tokens;
  for (const span& s : t.spans) {
    if (!step_plan.matches(s)) continue;
    durations.push_back(s.dur_ns);
    rows.push_back(s.rows);
    tokens.push_back(std::int64_t{s.prefill} + s.decode);
  }
  out << "\nSteps (engine step_plan spans)\n";
  if (durations.empty()) {
    out << "  none in this trace\n";
    return;
  }
  const auto step_buckets = log_buckets(durations);
  const auto row_buckets = linear_buckets(rows, 16);
  const auto token_buckets = linear_buckets(tokens, 16);
  const distribution d = describe(durations);
  out << fmt::format("  count {}   step time p50 {:.3f} ms   p99 {:.3f} ms   max {:.3f} ms\n",
                     d.count, ms(static_cast<double>(d.p50)), ms(static_cast<double>(d.p99)),
                     ms(static_cast<double>(d.max)));
  out << "\n  step time\n" << render_histogram(step_buckets, duration_range_label, "    ");
  out << "\n  batch size (rows per step)\n" << render_histogram(row_buckets, range_label, "    ");
  out << "\n  tokens per step (prefill + decode)\n"
      << render_histogram(token_buckets, range_label, "    ");
}

void write_requests(const trace& t, std::ostream& out) {
  const auto phases = compute_request_phases(t);
  out << "\nRequests (distinct req of scheduler submit)\n";
  if (phases.empty()) {
    out << "  none in this trace\n";
    return;
  }
  std::vector<std::int64_t> queue, prefill, decode, steps;
  std::size_t num_complete = 0, num_never_scheduled = 0, num_no_prefill = 0, num_unfinished = 0;
  for (const request_phases& r : phases) {
    if (auto v = r.queue_ns()) queue.push_back(*v);
    if (auto v = r.prefill_ns()) prefill.push_back(*v);
    if (auto v = r.decode_ns()) decode.push_back(*v);
    if (r.first_row_ns) steps.push_back(r.num_steps);
    if (r.complete()) ++num_complete;
    if (!r.first_row_ns) ++num_never_scheduled;
    if (r.first_row_ns && !r.prefill_end_ns) ++num_no_prefill;
    if (!r.finish_ns) ++num_unfinished;
  }
  out << fmt::format("  count {}   complete {}   incomplete {}\n", phases.size(), num_complete,
                     phases.size() - num_complete);
  if (num_complete != phases.size()) {
    out << fmt::format(
        "  incomplete: {} never got a row (cancelled or still queued), {} had no prefill row, "
        "{} had no finish\n",
        num_never_scheduled, num_no_prefill, num_unfinished);
  }
  out << fmt::format("  {:<14} {:>7} {:>11} {:>11} {:>11}\n", "phase (ms)", "n", "p50", "p99",
                     "max");
  const auto line = [&](const char* name, std::vector<std::int64_t>& values, double scale) {
    const distribution d = describe(values);
    out << fmt::format("  {:<14} {:>7} {:>11.3f} {:>11.3f} {:>11.3f}\n", name, d.count,
                       static_cast<double>(d.p50) * scale, static_cast<double>(d.p99) * scale,
                       static_cast<double>(d.max) * scale);
  };
  line("queue", queue, 1e-6);
  line("prefill", prefill, 1e-6);
  line("decode", decode, 1e-6);
  out << fmt::format("  {:<14} {:>7} {:>11} {:>11} {:>11}\n", "phase (count)", "n", "p50", "p99",
                     "max");
  const distribution s = describe(steps);
  out << fmt::format("  {:<14} {:>7} {:>11} {:>11} {:>11}\n", "steps", s.count, s.p50, s.p99,
                     s.max);
}

}  // namespace

std::vector<message_stats> compute_message_stats(const trace& t) {
  // Key: actor << 16 | msg, so a std::map iterates grouped by actor.
  std::map<std::uint32_t, std::vector<std::int64_t>> durations;
  for (const span& s : t.spans) {
    durations[std::uint32_t{s.actor} << 16 | s.msg].push_back(s.dur_ns);
  }
  std::vector<message_stats> out;
  for (std::uint16_t actor : actors_in_display_order(t)) {
    std::vector<message_stats> mine;
    for (auto& [key, values] : durations) {
      if (key >> 16 != actor) continue;
      mine.push_back(
          {t.name(actor), t.name(static_cast<std::uint16_t>(key & 0xFFFF)), describe(values)});
    }
    std::sort(mine.begin(), mine.end(),
              [](const message_stats& a, const message_stats& b) { return a.msg < b.msg; });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

void write_summary(const trace& t, std::ostream& out) {
  out << fmt::format("courier-trace summary of {}", t.origin);
  if (!t.header.model.empty()) out << fmt::format(" (model {})", t.header.model);
  out << '\n';
  out << fmt::format("  {} spans over {:.3f} ms", t.spans.size(),
                     ms(static_cast<double>(t.end_ns() - t.begin_ns())));
  if (t.header.sample > 0 && t.header.sample < 1.0) {
    out << fmt::format("; sampled at {:g}, so counts are about {:g}x too low", t.header.sample,
                       1.0 / t.header.sample);
  }
  out << "\n\n";
  if (t.spans.empty()) {
    out << "  no spans in this trace\n";
  } else {
    write_messages(t, out);
    write_steps(t, out);
    write_requests(t, out);
  }
  if (t.num_dropped > 0) {
    out << fmt::format(
        "\nDropped spans: {} (trace buffers were full; the counts above miss them)\n",
        t.num_dropped);
  }
  if (t.num_skipped_lines > 0) {
    out << fmt::format("\nSkipped a truncated last line.\n");
  }
}

}  // namespace courier::trace_tool
