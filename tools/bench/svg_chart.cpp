#include "tools/bench/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "tools/trace/stats.hpp"
#include "tools/trace/svg_canvas.hpp"

namespace courier::bench_tool {
namespace {

using trace_tool::nice_step;
using trace_tool::px;
using trace_tool::xml_escape;

// Labels with as many decimals as the step needs: 0.05 -> 2, 20 -> 0.
std::string tick_label(double v, double step) {
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  return fmt::format("{:.{}f}", v, decimals);
}

}  // namespace

double nice_y_max(double largest) {
  if (!(largest > 0) || std::isinf(largest)) return 1;
  const double step = nice_step(largest / 4);
  return std::ceil(largest / step - 1e-9) * step;
}

void write_frame(std::ostream& out, const chart_frame& f, const std::string& title,
                 const std::vector<legend_entry>& legend) {
  out << fmt::format(R"(<text x="{}" y="{}" font-weight="bold">{}</text>)"
                     "\n",
                     f.left_px, f.top_px - 8, xml_escape(title));
  int lx = f.left_px + 20 + static_cast<int>(title.size()) * 7;
  for (const legend_entry& e : legend) {
    out << fmt::format(
        R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)"
        "\n",
        lx, f.top_px - 17, e.colour, lx + 14, f.top_px - 8, xml_escape(e.name));
    lx += 30 + static_cast<int>(e.name.size()) * 7;
  }
  const double y_step = nice_step(f.y_max / 4);
  for (int k = 0; k * y_step <= f.y_max * (1 + 1e-9); ++k) {
    const double v = k * y_step;
    out << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ddd"/>)"
                       R"(<text x="{}" y="{}" text-anchor="end">{}</text>)"
                       "\n",
                       f.left_px, px(f.y(v)), f.left_px + f.width_px, px(f.y(v)), f.left_px - 6,
                       px(f.y(v) + 4), tick_label(v, y_step));
  }
  const double x_step = nice_step((f.x1_s - f.x0_s) / 10);
  const int bottom = f.top_px + f.height_px;
  for (int k = 0; f.x0_s + k * x_step <= f.x1_s * (1 + 1e-9); ++k) {
    const double s = f.x0_s + k * x_step;
    out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/>)"
                       R"(<text x="{0}" y="{3}" text-anchor="middle">{4}</text>)"
                       "\n",
                       px(f.x(s)), bottom, bottom + 4, bottom + 16, tick_label(s, x_step));
  }
  out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>)"
                     "\n",
                     f.left_px, f.top_px, f.width_px, f.height_px);
}

void write_bars(std::ostream& out, const chart_frame& f, double width_s,
                const std::vector<double>& values, const std::string& colour) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!(v > 0)) continue;
    const double x0 = f.x(f.x0_s + static_cast<double>(i) * width_s);
    const double x1 = f.x(f.x0_s + static_cast<double>(i + 1) * width_s);
    out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)"
                       "\n",
                       px(x0), px(f.y(v)), px(std::max(0.5, x1 - x0)), px(f.y(0) - f.y(v)), colour);
  }
}

void write_line(std::ostream& out, const chart_frame& f, double width_s,
                const std::vector<double>& values, const std::string& colour) {
  std::string points;
  const auto flush = [&] {
    if (points.empty()) return;
    out << fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)"
                       "\n",
                       colour, points);
    points.clear();
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      flush();
      continue;
    }
    const double s = f.x0_s + (static_cast<double>(i) + 0.5) * width_s;
    if (!points.empty()) points += ' ';
    points += px(f.x(s)) + "," + px(f.y(values[i]));
  }
  flush();
}

void write_dots(std::ostream& out, const chart_frame& f,
                const std::vector<std::pair<double, double>>& points, const std::string& colour) {
  for (const auto& [s, v] : points) {
    out << fmt::format(R"(<circle cx="{}" cy="{}" r="2" fill="{}" fill-opacity="0.6"/>)"
                       "\n",
                       px(f.x(s)), px(f.y(v)), colour);
  }
}

}  // namespace courier::bench_tool
