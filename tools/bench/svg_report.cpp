#include "tools/bench/svg_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "tools/bench/svg_chart.hpp"
#include "tools/trace/svg_canvas.hpp"

namespace courier::bench_tool {
namespace {

constexpr int width_px = 1000;
constexpr int left_px = 80;
constexpr int right_px = 30;
constexpr int title_px = 40;
constexpr int chart_height_px = 180;
constexpr int chart_gap_px = 70;  // room for the x labels and the next chart's title

double largest(const std::vector<double>& v) {
  double m = 0;
  for (const double x : v) {
    if (std::isfinite(x)) m = std::max(m, x);
  }
  return m;
}

chart_frame frame_at(int index, double x1_s, double y_max) {
  chart_frame f;
  f.x0_s = 0;
  f.x1_s = x1_s;
  f.y_max = nice_y_max(y_max);
  f.left_px = left_px;
  f.width_px = width_px - left_px - right_px;
  f.top_px = title_px + 30 + index * (chart_height_px + chart_gap_px);
  f.height_px = chart_height_px;
  return f;
}

}  // namespace

void write_svg_report(std::ostream& out, const timeline& t, const std::string& title) {
  const int height_px = title_px + 30 + 3 * (chart_height_px + chart_gap_px);
  const double x1_s =
      std::max(t.bucket_s * static_cast<double>(t.output_tokens_per_s.size()), t.bucket_s);
  out << fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(font-family="sans-serif" font-size="12">)"
      "\n",
      width_px, height_px);
  out << fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)"
                     "\n",
                     width_px, height_px);
  out << fmt::format(R"(<text x="{}" y="{}" font-size="15" font-weight="bold">{}</text>)"
                     "\n",
                     left_px, title_px - 14, trace_tool::xml_escape(title));
  out << fmt::format(
      R"(<text x="{}" y="{}">time from the first request (s); buckets of {} s</text>)"
      "\n",
      left_px, title_px + 2, t.bucket_s);

  const std::string blue = trace_tool::palette_colour(0);
  const std::string orange = trace_tool::palette_colour(1);
  const std::string red = trace_tool::palette_colour(2);
  const std::string green = trace_tool::palette_colour(4);

  const chart_frame tput = frame_at(0, x1_s, largest(t.output_tokens_per_s));
  write_frame(out, tput, "Output token throughput (tok/s)", {});
  write_bars(out, tput, t.bucket_s, t.output_tokens_per_s, blue);

  double ttft_top = largest(t.ttft_max_ms);
  for (const auto& p : t.ttft_points) ttft_top = std::max(ttft_top, p.second);
  const chart_frame ttft = frame_at(1, x1_s, ttft_top);
  std::vector<legend_entry> ttft_legend = {{"bucket median", orange}, {"bucket max", red}};
  if (!t.ttft_points.empty()) ttft_legend.insert(ttft_legend.begin(), {"request", blue});
  write_frame(out, ttft, "TTFT (ms) at request completion", ttft_legend);
  write_dots(out, ttft, t.ttft_points, blue);
  write_line(out, ttft, t.bucket_s, t.ttft_median_ms, orange);
  write_line(out, ttft, t.bucket_s, t.ttft_max_ms, red);

  const chart_frame itl = frame_at(2, x1_s, largest(t.itl_median_ms));
  write_frame(out, itl, "ITL median (ms)", {});
  write_line(out, itl, t.bucket_s, t.itl_median_ms, green);
  out << "</svg>\n";
}

}  // namespace courier::bench_tool
