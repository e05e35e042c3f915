#include "tools/trace/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "tools/trace/stats.hpp"
#include "tools/trace/svg_canvas.hpp"
#include "tools/trace/svg_lanes.hpp"
#include "tools/trace/svg_step_chart.hpp"

namespace courier::trace_tool {

namespace {

constexpr int width_px = 1400;
constexpr int left_px = 150;  // room for lane names and y-axis labels
constexpr int right_px = 30;
constexpr int row_height_px = 14;
constexpr int lane_gap_px = 6;
constexpr int chart_height_px = 90;
constexpr int chart_gap_px = 40;
constexpr int legend_columns = 4;
constexpr int legend_line_px = 16;
constexpr std::size_t max_legend_entries = 48;

struct tick {
  double x;
  std::string label;
};

// Ticks at a 1-2-5 step in ms, about ten over the axis, with as many decimals as the step needs.
std::vector<tick> time_ticks(const time_axis& axis) {
  const double span_ms = static_cast<double>(axis.t1_ns - axis.t0_ns) / 1e6;
  const double step_ms = nice_step(span_ms / 10);
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step_ms))));
  std::vector<tick> out;
  for (long k = 0; k * step_ms <= span_ms * (1 + 1e-9); ++k) {
    const double ms = static_cast<double>(k) * step_ms;
    out.push_back({axis.x(axis.t0_ns + static_cast<std::int64_t>(std::llround(ms * 1e6))),
                   fmt::format("{:.{}f}", ms, decimals)});
  }
  return out;
}

void write_time_labels(std::ostream& out, const std::vector<tick>& ticks, int y) {
  for (const tick& t : ticks) {
    out << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)"
                       "\n",
                       px(t.x), y, t.label);
  }
}

void write_legend(std::ostream& out, const std::vector<message_type>& types, int top) {
  out << "<g class=\"legend\">\n";
  out << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">message types (span count)</text>)"
                     "\n",
                     left_px, top);
  const int column_px = (width_px - left_px - right_px) / legend_columns;
  for (std::size_t i = 0; i < types.size() && i < max_legend_entries; ++i) {
    const int x = left_px + static_cast<int>(i % legend_columns) * column_px;
    const int y = top + 8 + static_cast<int>(i / legend_columns) * legend_line_px;
    out << fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/>)"
                       R"(<text x="{}" y="{}">{} ({})</text>)"
                       "\n",
                       x, y, palette_colour(types[i].colour), x + 14, y + 9,
                       xml_escape(types[i].label), types[i].count);
  }
  if (types.size() > max_legend_entries) {
    const int rows = static_cast<int>((max_legend_entries + legend_columns - 1) / legend_columns);
    out << fmt::format(R"(<text x="{}" y="{}">and {} more message types</text>)"
                       "\n",
                       left_px, top + 8 + rows * legend_line_px + 9,
                       types.size() - max_legend_entries);
  }
  out << "</g>\n";
}

int legend_height(std::size_t num_types) {
  const std::size_t shown = std::min(num_types, max_legend_entries);
  const int rows = static_cast<int>((shown + legend_columns - 1) / legend_columns);
  return 8 + (rows + (num_types > shown ? 1 : 0)) * legend_line_px;
}

// The title: the trace's origin, its spans, time span, model and what was dropped.
void write_title(std::ostream& out, const trace& t, const lane_raster& lanes) {
  std::string subtitle = fmt::format("{} spans over {:.3f} ms", t.spans.size(),
                                     static_cast<double>(t.end_ns() - t.begin_ns()) / 1e6);
  if (!t.header.model.empty()) subtitle += ", model " + t.header.model;
  if (t.num_dropped > 0) subtitle += fmt::format(", {} spans dropped", t.num_dropped);
  if (lanes.column_px() > 1) {
    subtitle += fmt::format(", drawn in {}-pixel columns", lanes.column_px());
  }
  out << fmt::format(R"(<text x="{}" y="24" font-size="16" font-weight="bold">{}</text>)"
                     "\n",
                     left_px, xml_escape("courier-trace: " + t.origin));
  out << fmt::format(R"(<text x="{}" y="42">{}</text>)"
                     "\n",
                     left_px, xml_escape(subtitle));
}

// Each lane (an actor's spans): its band, its name, its spans.
void write_lanes(std::ostream& out, const lane_raster& lanes, const std::vector<int>& lane_tops,
                 int lane_width_px) {
  for (std::size_t i = 0; i < lanes.lanes().size(); ++i) {
    const auto& lane = lanes.lanes()[i];
    const int lane_height = lane.num_rows * row_height_px;
    out << fmt::format(R"(<g class="lane" data-actor="{}">)"
                       "\n",
                       xml_escape(lane.name));
    out << fmt::format(
        R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.6"/>)"
        "\n",
        left_px, lane_tops[i], lane_width_px, lane_height, i % 2 == 0 ? "#f0f0f0" : "#f8f8f8");
    out << fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-weight="bold">{}</text>)"
                       "\n",
                       left_px - 8, lane_tops[i] + lane_height / 2 + 4, xml_escape(lane.name));
    lanes.write_lane(out, i, lane_tops[i], row_height_px);
    out << "</g>\n";
  }
}

}  // namespace

void write_svg_plot(const trace& t, std::ostream& out) {
  time_axis axis;
  axis.t0_ns = t.begin_ns();
  axis.t1_ns = std::max(t.end_ns(), axis.t0_ns + 1000);  // at least 1 us wide
  axis.left_px = left_px;
  axis.width_px = width_px - left_px - right_px;

  const lane_raster lanes(t, axis);
  const step_columns steps = collect_step_columns(t, axis);
  const auto ticks = time_ticks(axis);

  // Layout, top to bottom: title, time labels, lanes, two step charts, time labels, legend.
  const int lanes_top = 72;
  std::vector<int> lane_tops;
  int y = lanes_top;
  for (const auto& lane : lanes.lanes()) {
    lane_tops.push_back(y);
    y += lane.num_rows * row_height_px + lane_gap_px;
  }
  const int lanes_bottom = y;
  const int rows_chart_top = lanes_bottom + chart_gap_px;
  const int tokens_chart_top = rows_chart_top + chart_height_px + chart_gap_px;
  const int charts_bottom = tokens_chart_top + chart_height_px;
  const int legend_top = charts_bottom + 64;
  const int height_px = legend_top + legend_height(lanes.types().size()) + 16;

  out << fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(font-family="sans-serif" font-size="11">)"
      "\n",
      width_px, height_px);
  out << fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="white"/>)"
                     "\n",
                     width_px, height_px);
  write_title(out, t, lanes);

  for (const tick& tk : ticks) {
    out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#e4e4e4"/>)"
                       "\n",
                       px(tk.x), lanes_top - 6, charts_bottom);
  }
  write_time_labels(out, ticks, lanes_top - 10);

  write_lanes(out, lanes, lane_tops, axis.width_px);
  if (t.spans.empty()) {
    out << fmt::format(R"(<text x="{}" y="{}">no spans in this trace</text>)"
                       "\n",
                       left_px + 8, lanes_top + 14);
  }

  const std::string steps_note =
      fmt::format(" ({} engine steps, largest per pixel)", steps.num_steps);
  write_bar_chart(out, axis, rows_chart_top, chart_height_px, "rows per step" + steps_note,
                  {{"rows", "#4e79a7", &steps.rows}});
  write_bar_chart(out, axis, tokens_chart_top, chart_height_px, "tokens per step",
                  {{"prefill tokens", "#f28e2b", &steps.prefill},
                   {"decode tokens (one per decode row)", "#59a14f", &steps.decode}});
  out << fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#444"/>)"
                     "\n",
                     left_px, left_px + axis.width_px, charts_bottom);
  write_time_labels(out, ticks, charts_bottom + 16);
  out << fmt::format(
      R"(<text x="{}" y="{}" text-anchor="middle">time since the first span (ms)</text>)"
      "\n",
      left_px + axis.width_px / 2, charts_bottom + 34);
  write_legend(out, lanes.types(), legend_top);
  out << "</svg>\n";
}

}  // namespace courier::trace_tool
