#pragma once
// The step-size bar charts under the actor lanes: for each pixel column, the engine
// "step_plan" spans covering it, drawn as bars on the lanes' time axis. Per column the chart
// shows the largest step (a column may cover many steps), so its size is bounded by the width.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/trace/svg_canvas.hpp"
#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

struct step_columns {
  std::vector<std::int64_t> rows;     // most rows of a step covering each column
  std::vector<std::int64_t> prefill;  // prefill tokens of the step with most tokens there
  std::vector<std::int64_t> decode;   // decode rows (one token each) of that step
  std::size_t num_steps = 0;
};

step_columns collect_step_columns(const trace& t, const time_axis& axis);

struct bar_series {
  std::string name;
  const char* colour = "#000";
  const std::vector<std::int64_t>* values = nullptr;  // Borrowed; one per column
};

// A bar chart with a labelled y axis; several series stack from the bottom up.
void write_bar_chart(std::ostream& out, const time_axis& axis, int top_px, int height_px,
                     const std::string& title, const std::vector<bar_series>& stacked);

}  // namespace courier::trace_tool
