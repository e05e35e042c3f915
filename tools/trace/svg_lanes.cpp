#include "tools/trace/svg_lanes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <unordered_map>

namespace courier::trace_tool {

namespace {

std::uint64_t series_key(std::size_t lane, int row, std::size_t colour) {
  return std::uint64_t{lane} << 32 | std::uint64_t(row) << 16 | colour;
}

}  // namespace

lane_raster::lane_raster(const trace& t, const time_axis& axis) : axis_(axis) {
  // Lanes and message types in display order; types get colours in that order.
  const auto actors = actors_in_display_order(t);
  std::vector<std::size_t> lane_of(t.names.size(), 0);
  for (std::size_t i = 0; i < actors.size(); ++i) {
    if (i < max_lanes) {
      lanes_.push_back({t.name(actors[i]), 1});
    } else if (i == max_lanes) {
      lanes_.push_back({"other actors", 1});
    }
    lane_of[actors[i]] = std::min(i, max_lanes);
  }
  std::map<std::pair<std::size_t, std::string>, std::uint32_t> pairs;  // (rank, msg) -> key
  std::vector<std::size_t> rank(t.names.size(), 0);
  for (std::size_t i = 0; i < actors.size(); ++i) rank[actors[i]] = i;
  std::unordered_map<std::uint32_t, std::uint64_t> counts;
  for (const span& s : t.spans) ++counts[std::uint32_t{s.actor} << 16 | s.msg];
  for (const auto& [key, n] : counts) {
    pairs.emplace(std::make_pair(rank[key >> 16], t.name(static_cast<std::uint16_t>(key & 0xFFFF))),
                  key);
  }
  std::unordered_map<std::uint32_t, std::uint32_t> type_of;
  for (const auto& [order, key] : pairs) {
    const auto actor = static_cast<std::uint16_t>(key >> 16);
    type_of[key] = static_cast<std::uint32_t>(types_.size());
    types_.push_back(
        {t.name(actor) + "/" + order.second, types_.size() % palette_size, counts[key]});
  }

  // Depth of each span among the spans of its actor on its thread: spans arrive parent first.
  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> open_ends;
  const int width = axis_.width_px;
  for (const span& s : t.spans) {
    auto& stack = open_ends[std::uint64_t{s.actor} << 32 | s.tid];
    while (!stack.empty() && stack.back() <= s.ts_ns) stack.pop_back();
    const int row = std::min<int>(static_cast<int>(stack.size()), max_rows_per_lane - 1);
    stack.push_back(s.end_ns());

    const std::size_t lane_index = lane_of[s.actor];
    lanes_[lane_index].num_rows = std::max(lanes_[lane_index].num_rows, row + 1);
    const std::uint32_t type = type_of[std::uint32_t{s.actor} << 16 | s.msg];
    const std::size_t colour = types_[type].colour;
    series& out = series_[series_key(lane_index, row, colour)];
    if (out.diff.empty()) {
      out.diff.assign(static_cast<std::size_t>(width) + 1, 0);
      out.starts.assign(static_cast<std::size_t>(width), 0);
    }
    // Four names are enough for a tooltip; the fourth only says there are more.
    if (out.types.size() < 4 &&
        std::find(out.types.begin(), out.types.end(), type) == out.types.end()) {
      out.types.push_back(type);
    }
    const int c0 = std::clamp(static_cast<int>(std::floor(axis_.offset_px(s.ts_ns))), 0, width - 1);
    const int c1 =
        std::clamp(static_cast<int>(std::ceil(axis_.offset_px(s.end_ns()))), c0 + 1, width);
    ++out.diff[static_cast<std::size_t>(c0)];
    --out.diff[static_cast<std::size_t>(c1)];
    ++out.starts[static_cast<std::size_t>(c0)];
  }

  // A trace whose spans leave gaps in every other pixel would give one rectangle per pixel per
  // colour: widen the columns until the count is bounded.
  std::vector<std::uint64_t> rows;  // lane << 16 | row, each once
  for (const auto& [key, ser] : series_) {
    if (rows.empty() || rows.back() != key >> 16) rows.push_back(key >> 16);
  }
  while (column_px_ < width) {
    std::size_t total = 0;
    for (std::uint64_t r : rows) {
      total += row_runs(static_cast<std::size_t>(r >> 16), static_cast<int>(r & 0xFFFF), column_px_)
                   .size();
    }
    if (total <= max_rectangles) break;
    column_px_ *= 2;
  }
}

std::vector<lane_raster::run> lane_raster::row_runs(std::size_t lane, int row,
                                                    int column_px) const {
  const int width = axis_.width_px;
  const auto num_columns = static_cast<std::size_t>((width + column_px - 1) / column_px);
  const std::uint64_t row_key = series_key(lane, row, 0) >> 16;
  std::vector<std::pair<std::size_t, const series*>> colours;  // ascending colour
  for (auto it = series_.lower_bound(series_key(lane, row, 0));
       it != series_.end() && it->first >> 16 == row_key; ++it) {
    colours.emplace_back(static_cast<std::size_t>(it->first & 0xFFFF), &it->second);
  }
  // Which colours paint each (possibly widened) column, and how many spans start there.
  std::vector<std::vector<char>> painted(colours.size(), std::vector<char>(num_columns, 0));
  std::vector<std::vector<std::uint64_t>> started(colours.size(),
                                                  std::vector<std::uint64_t>(num_columns, 0));
  std::vector<int> num_painted(num_columns, 0);
  for (std::size_t i = 0; i < colours.size(); ++i) {
    const series& s = *colours[i].second;
    std::int64_t open = 0;
    for (int p = 0; p < width; ++p) {
      const auto c = static_cast<std::size_t>(p / column_px);
      open += s.diff[static_cast<std::size_t>(p)];
      started[i][c] += s.starts[static_cast<std::size_t>(p)];
      if (open > 0 && !painted[i][c]) {
        painted[i][c] = 1;
        ++num_painted[c];
      }
    }
  }
  // Colours sharing a column split the row's height, so none hides another.
  std::vector<run> out;
  for (std::size_t i = 0; i < colours.size(); ++i) {
    std::vector<int> slot(num_columns, 0);
    for (std::size_t j = 0; j < i; ++j) {
      for (std::size_t c = 0; c < num_columns; ++c) slot[c] += painted[j][c];
    }
    std::size_t last = out.size();  // this colour's open run, if any
    for (std::size_t c = 0; c < num_columns; ++c) {
      if (!painted[i][c]) {
        last = out.size();
        continue;
      }
      const int column = static_cast<int>(c);
      if (last < out.size() && out[last].slot == slot[c] && out[last].num_slots == num_painted[c]) {
        out[last].c1 = column + 1;
        out[last].num_spans += started[i][c];
      } else {
        last = out.size();
        out.push_back({colours[i].first, colours[i].second, column, column + 1, slot[c],
                       num_painted[c], started[i][c]});
      }
    }
  }
  return out;
}

void lane_raster::write_lane(std::ostream& out, std::size_t index, int top_px,
                             int row_height_px) const {
  const double inner_px = row_height_px - 2;
  for (int row = 0; row < lanes_[index].num_rows; ++row) {
    for (const run& r : row_runs(index, row, column_px_)) {
      // Types beyond the palette share colours; name a few of them, not thousands.
      std::string label;
      for (std::size_t i = 0; i < r.s->types.size() && i < 3; ++i) {
        if (!label.empty()) label += ", ";
        label += types_[r.s->types[i]].label;
      }
      if (r.s->types.size() > 3) label += " and others";
      const int x0 = axis_.left_px + r.c0 * column_px_;
      const int x1 = std::min(axis_.left_px + r.c1 * column_px_, axis_.left_px + axis_.width_px);
      const double h = inner_px / r.num_slots;
      out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}">)"
                         R"(<title>{}: {} span{}</title></rect>)"
                         "\n",
                         x0, px(top_px + row * row_height_px + 1 + r.slot * h),
                         std::max(1, x1 - x0), px(h), palette_colour(r.colour), xml_escape(label),
                         r.num_spans, r.num_spans == 1 ? "" : "s");
    }
  }
}

}  // namespace courier::trace_tool
