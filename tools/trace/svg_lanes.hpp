#pragma once
// The actor lanes of the SVG plot, rasterised so that the output size does not grow with the
// trace: each span paints the pixel columns it covers in its lane's row (its nesting depth on
// its thread) and colour, and each run of painted columns becomes one rectangle. A span
// narrower than a pixel, or of zero duration, paints one column: a thin tick. Colours that
// share a column share the row's height there. Should the runs still number more than
// max_rectangles, the columns widen (2, 4, ... pixels) until they do not.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "tools/trace/svg_canvas.hpp"
#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

// One (actor, msg) pair and its colour, in legend order.
struct message_type {
  std::string label;  // "engine/step_plan"
  std::size_t colour = 0;
  std::uint64_t count = 0;
};

class lane_raster {
 public:
  static constexpr std::size_t max_lanes = 12;          // further actors share an "other" lane
  static constexpr int max_rows_per_lane = 4;           // deeper nesting shares the last row
  static constexpr std::size_t max_rectangles = 30000;  // coarser columns past this

  lane_raster(const trace& t, const time_axis& axis);

  struct lane {
    std::string name;
    int num_rows = 1;
  };
  const std::vector<lane>& lanes() const { return lanes_; }
  const std::vector<message_type>& types() const { return types_; }
  int column_px() const { return column_px_; }  // 1, or more when the trace was too busy

  // Writes lane `index`'s rectangles, its rows `row_height_px` tall from `top_px`.
  void write_lane(std::ostream& out, std::size_t index, int top_px, int row_height_px) const;

 private:
  // Columns painted by spans of one colour in one row of one lane.
  struct series {
    std::vector<std::int64_t> diff;     // +1 where a span starts, -1 past where it ends
    std::vector<std::uint32_t> starts;  // spans starting in each column, for tooltips
    std::vector<std::uint32_t> types;   // message types drawn in this colour here
  };
  // Painted columns of one colour in one row. Where k colours paint the same columns, each
  // gets one k-th of the row's height (slot 0 on top), so none hides another.
  struct run {
    std::size_t colour = 0;
    const series* s = nullptr;  // Borrowed from series_
    int c0 = 0;                 // first column, in units of column_px_
    int c1 = 0;                 // one past the last
    int slot = 0;
    int num_slots = 1;
    std::uint64_t num_spans = 0;
  };
  std::vector<run> row_runs(std::size_t lane, int row, int column_px) const;

  time_axis axis_;
  std::vector<lane> lanes_;
  std::vector<message_type> types_;
  std::map<std::uint64_t, series> series_;  // key: lane << 32 | row << 16 | colour
  int column_px_ = 1;
};

}  // namespace courier::trace_tool
