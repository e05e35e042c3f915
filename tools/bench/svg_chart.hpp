#pragma once
// One chart of the plot: a frame with a time axis in seconds and a linear value axis from 0,
// and the marks drawn in it (bars, lines broken at NaN, dots). Output is bounded by what the
// caller passes: one element per bar, dot or unbroken line.
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace courier::bench_tool {

// Invariants: x1_s > x0_s, y_max > 0, width_px > 0, height_px > 0.
struct chart_frame {
  double x0_s = 0;
  double x1_s = 1;
  double y_max = 1;
  int left_px = 0;
  int top_px = 0;
  int width_px = 1;
  int height_px = 1;

  double x(double s) const { return left_px + (s - x0_s) * width_px / (x1_s - x0_s); }
  double y(double v) const { return top_px + height_px - v * height_px / y_max; }
};

struct legend_entry {
  std::string name;
  std::string colour;
};

// A y_max rounded up to a 1-2-5 tick above the largest finite value (1 when there is none).
double nice_y_max(double largest);

// Title, legend, grid lines with y labels, and x labels in seconds under the chart.
void write_frame(std::ostream& out, const chart_frame& f, const std::string& title,
                 const std::vector<legend_entry>& legend);

// A bar per value (skipping zeros and NaN), bar i spanning [x0 + i*w, x0 + (i+1)*w).
void write_bars(std::ostream& out, const chart_frame& f, double width_s,
                const std::vector<double>& values, const std::string& colour);

// A polyline through (x0 + (i+0.5)*w, values[i]), broken where a value is NaN.
void write_line(std::ostream& out, const chart_frame& f, double width_s,
                const std::vector<double>& values, const std::string& colour);

// A dot per (x in seconds on the axis, value).
void write_dots(std::ostream& out, const chart_frame& f,
                const std::vector<std::pair<double, double>>& points, const std::string& colour);

}  // namespace courier::bench_tool
