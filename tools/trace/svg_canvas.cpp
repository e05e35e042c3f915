#include "tools/trace/svg_canvas.hpp"

#include <fmt/format.h>

#include <array>

#include "base/markup_escape.hpp"

namespace courier::trace_tool {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (const char* entity = base::markup_entity(c)) {
      out += entity;
    } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
      out += '?';  // control characters are not allowed in XML 1.0 at all
    } else {
      out += c;
    }
  }
  return out;
}

std::string px(double v) {
  return fmt::format("{:.1f}", v);
}

const char* palette_colour(std::size_t i) {
  static constexpr std::array<const char*, palette_size> colours = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
      "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78",
      "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd", "#c5b0d5"};
  return colours[i % palette_size];
}

}  // namespace courier::trace_tool
