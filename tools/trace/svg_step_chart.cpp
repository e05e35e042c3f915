#include "tools/trace/svg_step_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "tools/trace/stats.hpp"

namespace courier::trace_tool {

step_columns collect_step_columns(const trace& t, const time_axis& axis) {
  const auto width = static_cast<std::size_t>(axis.width_px);
  step_columns out;
  out.rows.assign(width, 0);
  out.prefill.assign(width, 0);
  out.decode.assign(width, 0);
  const span_kind step_plan = t.kind("engine", "step_plan");
  for (const span& s : t.spans) {
    if (!step_plan.matches(s)) continue;
    ++out.num_steps;
    const int w = axis.width_px;
    const int c0 = std::clamp(static_cast<int>(std::floor(axis.offset_px(s.ts_ns))), 0, w - 1);
    const int c1 = std::clamp(static_cast<int>(std::ceil(axis.offset_px(s.end_ns()))), c0 + 1, w);
    const std::int64_t tokens = std::int64_t{s.prefill} + s.decode;
    // Steps on the engine run one after another, so the columns visited add up to about the
    // width plus the number of steps.
    for (int c = c0; c < c1; ++c) {
      const auto i = static_cast<std::size_t>(c);
      out.rows[i] = std::max<std::int64_t>(out.rows[i], s.rows);
      if (tokens > out.prefill[i] + out.decode[i]) {
        out.prefill[i] = s.prefill;
        out.decode[i] = s.decode;
      }
    }
  }
  return out;
}

void write_bar_chart(std::ostream& out, const time_axis& axis, int top_px, int height_px,
                     const std::string& title, const std::vector<bar_series>& stacked) {
  const auto width = static_cast<std::size_t>(axis.width_px);
  std::vector<std::int64_t> totals(width, 0);
  for (const bar_series& s : stacked) {
    for (std::size_t c = 0; c < width; ++c) totals[c] += (*s.values)[c];
  }
  const std::int64_t most = std::max<std::int64_t>(
      1, totals.empty() ? 1 : *std::max_element(totals.begin(), totals.end()));
  const auto tick = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(nice_step(static_cast<double>(most) / 4)));
  const std::int64_t y_max = (most + tick - 1) / tick * tick;
  const int bottom = top_px + height_px;
  const auto y = [&](std::int64_t v) {
    return bottom - static_cast<double>(v) * height_px / static_cast<double>(y_max);
  };

  // Frame, y ticks and title.
  out << fmt::format(R"(<g class="chart"><text x="{}" y="{}" font-weight="bold">{}</text>)"
                     "\n",
                     axis.left_px, top_px - 6, xml_escape(title));
  int legend_x = axis.left_px + 12 + static_cast<int>(title.size()) * 7;
  for (const bar_series& s : stacked) {
    if (stacked.size() < 2) break;
    out << fmt::format(
        R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)"
        "\n",
        legend_x, top_px - 15, s.colour, legend_x + 14, top_px - 6, xml_escape(s.name));
    legend_x += 24 + static_cast<int>(s.name.size()) * 7;
  }
  for (std::int64_t v = 0; v <= y_max; v += tick) {
    out << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ddd"/>)"
                       R"(<text x="{}" y="{}" text-anchor="end">{}</text>)"
                       "\n",
                       axis.left_px, px(y(v)), axis.left_px + axis.width_px, px(y(v)),
                       axis.left_px - 6, px(y(v) + 4), v);
  }
  out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/>)"
                     "\n",
                     axis.left_px, top_px, bottom);

  // Bars: one rectangle per run of columns with the same value and base.
  std::vector<std::int64_t> base(width, 0);
  for (const bar_series& s : stacked) {
    const auto& v = *s.values;
    for (std::size_t c = 0; c < width;) {
      std::size_t end = c + 1;
      while (end < width && v[end] == v[c] && base[end] == base[c]) ++end;
      if (v[c] > 0) {
        out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)"
                           "\n",
                           axis.left_px + static_cast<int>(c), px(y(base[c] + v[c])), end - c,
                           px(y(base[c]) - y(base[c] + v[c])), s.colour);
      }
      c = end;
    }
    for (std::size_t c = 0; c < width; ++c) base[c] += v[c];
  }
  out << "</g>\n";
}

}  // namespace courier::trace_tool
