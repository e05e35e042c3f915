#include "tools/trace/request_phases.hpp"

#include <algorithm>

namespace courier::trace_tool {

namespace {

std::optional<std::int64_t> between(std::optional<std::int64_t> from,
                                    std::optional<std::int64_t> to) {
  if (!from || !to) return std::nullopt;
  return *to - *from;
}

}  // namespace

std::optional<std::int64_t> request_phases::queue_ns() const {
  return between(submit_ns, first_row_ns);
}
std::optional<std::int64_t> request_phases::prefill_ns() const {
  return between(first_row_ns, prefill_end_ns);
}
std::optional<std::int64_t> request_phases::decode_ns() const {
  return between(prefill_end_ns, finish_ns);
}

std::unordered_map<std::uint32_t, std::size_t> index_engine_steps(const trace& t) {
  const span_kind step_plan = t.kind("engine", "step_plan");
  std::unordered_map<std::uint32_t, std::size_t> out;
  for (std::size_t i = 0; i < t.spans.size(); ++i) {
    const span& s = t.spans[i];
    if (step_plan.matches(s)) out.emplace(s.step, i);
  }
  return out;
}

std::vector<request_phases> compute_request_phases(const trace& t) {
  const span_kind submit = t.kind("scheduler", "submit");
  const span_kind row = t.kind("scheduler", "row");
  const span_kind finish = t.kind("scheduler", "finish");
  const auto steps = index_engine_steps(t);

  std::vector<request_phases> out;
  std::unordered_map<std::int64_t, std::size_t> by_req;  // req -> index in out
  std::vector<std::vector<std::uint32_t>> step_lists;    // steps with a row, per request
  for (const span& s : t.spans) {  // sorted by ts, so "first" is the first met
    if (!submit.matches(s) || !s.has(field::req) || by_req.count(s.req)) continue;
    by_req.emplace(s.req, out.size());
    request_phases r;
    r.req = s.req;
    r.submit_ns = s.ts_ns;
    out.push_back(r);
  }
  step_lists.resize(out.size());
  for (const span& s : t.spans) {
    if (!s.has(field::req)) continue;
    const auto it = by_req.find(s.req);
    if (it == by_req.end()) continue;
    request_phases& r = out[it->second];
    if (finish.matches(s) && !r.finish_ns) r.finish_ns = s.ts_ns;
    if (!row.matches(s)) continue;
    if (!r.first_row_ns) r.first_row_ns = s.ts_ns;
    step_lists[it->second].push_back(s.step);
    if (s.prefill > 0) {
      const auto step = steps.find(s.step);
      const std::int64_t end =
          step == steps.end() ? s.ts_ns : s.ts_ns + t.spans[step->second].dur_ns;
      // Rows come in ts order, so the last prefill row seen wins.
      r.prefill_end_ns = end;
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& list = step_lists[i];
    std::sort(list.begin(), list.end());
    out[i].num_steps =
        static_cast<std::uint32_t>(std::unique(list.begin(), list.end()) - list.begin());
  }
  return out;
}

}  // namespace courier::trace_tool
