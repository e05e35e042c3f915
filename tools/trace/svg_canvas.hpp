#pragma once
// Shared pieces of the SVG plot: the time axis mapping, number and text formatting, colours.
#include <cstdint>
#include <string>
#include <string_view>

namespace courier::trace_tool {

// Maps trace time to x pixels. Invariants: width_px > 0, t1_ns > t0_ns.
struct time_axis {
  std::int64_t t0_ns = 0;
  std::int64_t t1_ns = 1;
  int left_px = 0;
  int width_px = 1;

  double offset_px(std::int64_t ns) const {  // from left_px
    return static_cast<double>(ns - t0_ns) * width_px / static_cast<double>(t1_ns - t0_ns);
  }
  double x(std::int64_t ns) const { return left_px + offset_px(ns); }
};

// Text safe inside an SVG element or a quoted attribute.
std::string xml_escape(std::string_view text);

// Coordinates with one decimal: enough for a pixel grid, and short.
std::string px(double v);

// A colour from a 20-colour palette (Tableau 20), cycling past 20.
const char* palette_colour(std::size_t i);
inline constexpr std::size_t palette_size = 20;

}  // namespace courier::trace_tool
