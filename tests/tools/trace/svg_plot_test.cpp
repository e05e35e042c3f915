#include "tools/trace/svg_plot.hpp"

#include <catch2/catch.hpp>
#include <sstream>

#include "tests/tools/trace/synthetic_trace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_svg_plot {

namespace {

using namespace courier::trace_tool;
namespace synth = courier::test::trace;

std::string plot_of(const std::string& text) {
  std::istringstream in(text);
  std::ostringstream warn, out;
  write_svg_plot(read_trace(in, "plot.jsonl", warn), out);
  return out.str();
}

// Checks that tags balance and text holds no raw '<' or '&' outside entities; returns the
// problem, or "" when the document is well formed in that sense.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while (i < doc.size()) {
    if (doc[i] == '&') {
      const auto semi = doc.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return "bare & at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (doc[i] != '<') {
      ++i;
      continue;
    }
    const auto close = doc.find('>', i);
    if (close == std::string::npos) return "unclosed tag at " + std::to_string(i);
    const std::string tag = doc.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    const auto name_end = tag.find_first_of(" \n/", tag[0] == '/' ? 1 : 0);
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "unbalanced </" + name + ">";
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, name_end));
    }
    i = close + 1;
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("courier-trace: the SVG plot is well formed with a lane per actor and a legend",
          "[tools]") {
  const std::string svg = plot_of(synth::serving_trace_text());
  CHECK_THAT(svg, Catch::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(xml_problem(svg).empty());
  INFO(xml_problem(svg));
  for (const char* actor : {"admission", "scheduler", "engine", "telemetry"}) {
    CHECK(count_of(svg, std::string("<g class=\"lane\" data-actor=\"") + actor + "\">") == 1);
  }
  // Lanes come in pipeline order.
  CHECK(svg.find("data-actor=\"admission\"") < svg.find("data-actor=\"scheduler\""));
  CHECK(svg.find("data-actor=\"scheduler\"") < svg.find("data-actor=\"engine\""));
  CHECK(svg.find("data-actor=\"engine\"") < svg.find("data-actor=\"telemetry\""));
  CHECK_THAT(svg, Catch::Contains("<g class=\"legend\">"));
  CHECK_THAT(svg, Catch::Contains("engine/step_plan (8)"));
  CHECK_THAT(svg, Catch::Contains("scheduler/row (19)"));
  CHECK_THAT(svg, Catch::Contains("courier-trace: plot.jsonl"));
  CHECK_THAT(svg, Catch::Contains("rows per step"));
  CHECK_THAT(svg, Catch::Contains("prefill tokens"));
  CHECK_THAT(svg, Catch::Contains("time since the first span (ms)"));
  CHECK_THAT(svg, Catch::Contains("5 spans dropped"));
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
}

TEST_CASE("courier-trace: the SVG plot escapes names and survives an empty trace", "[tools]") {
  const std::string odd = plot_of(synth::header_line + "\n" +
                                  R"({"actor":"a<&>\"'","msg":"m</svg>","ts":5,"dur":0,"tid":1})"
                                  "\n");
  CHECK(xml_problem(odd).empty());
  CHECK_THAT(odd, Catch::Contains("a&lt;&amp;&gt;&#34;&#39;"));  // numeric references (XML 1.0 4.1)
  const std::string empty = plot_of(synth::header_line + "\n");
  CHECK(xml_problem(empty).empty());
  CHECK_THAT(empty, Catch::Contains("no spans in this trace"));
}

TEST_CASE("courier-trace: the SVG plot stays small for a trace of 200k spans", "[tools]") {
  // 20k engine steps of ~1 ms with nested forward/sample, scheduler rows, irregular gaps so
  // that narrow spans fall in most pixel columns of most rows.
  std::string text = synth::header_line + "\n";
  std::int64_t ts = 0;
  std::size_t num_spans = 0;
  const auto add = [&](const char* actor, const char* msg, std::int64_t at, std::int64_t dur,
                       int tid, const std::string& extra) {
    text += R"({"actor":")" + std::string(actor) + R"(","msg":")" + msg + R"(","ts":)" +
            std::to_string(at) + R"(,"dur":)" + std::to_string(dur) + R"(,"tid":)" +
            std::to_string(tid) + extra + "}\n";
    ++num_spans;
  };
  // 9 spans a step (add() counts them), until there are 200k.
  for (int k = 0; k * 9 < 200'000; ++k) {
    const std::int64_t dur = 900'000 + (k * 7919) % 400'000;
    const std::string step = ",\"step\":" + std::to_string(k);
    add("engine", "step_plan", ts, dur, 3,
        step + ",\"rows\":4,\"prefill\":" + std::to_string(k % 5 * 100) + ",\"decode\":3");
    add("engine", "forward", ts + 10'000, dur - 200'000, 3, step);
    add("engine", "sample", ts + dur - 150'000, 100'000, 3, step);
    add("scheduler", "step_result", ts + dur + 20'000, 30'000, 2, step);
    for (int r = 0; r < 4; ++r) {
      add("scheduler", "row", ts, 0, 2, step + ",\"req\":" + std::to_string(k % 50 + r));
    }
    add("admission", "token_event", ts + dur + 60'000, 5'000, 1 + k % 3, "");
    ts += dur + 100'000 + (k % 11) * 50'000;
  }
  const std::string svg = plot_of(text);
  CHECK(svg.size() < 3'000'000);
  CHECK(xml_problem(svg).empty());
  CHECK_THAT(svg, Catch::Contains(std::to_string(num_spans) + " spans over"));
}

TEST_CASE("courier-trace: the SVG plot widens its columns when spans leave a gap in every pixel",
          "[tools]") {
  // 12 actors x 20 messages, each painting every other pixel: ~146k runs of one pixel.
  trace t;
  t.origin = "gaps.jsonl";
  for (int a = 0; a < 12; ++a) t.names.push_back("actor" + std::to_string(a));
  for (int m = 0; m < 20; ++m) t.names.push_back("msg" + std::to_string(m));
  const std::int64_t pixel_ns = 1000;  // the plot is 1220 pixels wide: 1.22 ms
  for (std::int64_t p = 0; p < 1220; p += 2) {
    for (std::uint16_t a = 0; a < 12; ++a) {
      for (std::uint16_t m = 0; m < 20; ++m) {
        span s;
        s.ts_ns = p * pixel_ns + 100;
        s.dur_ns = 500;
        s.tid = a;
        s.actor = a;
        s.msg = static_cast<std::uint16_t>(12 + m);
        t.spans.push_back(s);
      }
    }
  }
  t.spans.back().dur_ns = 1220 * pixel_ns - t.spans.back().ts_ns;  // the axis ends at 1.22 ms
  std::ostringstream out;
  write_svg_plot(t, out);
  const std::string svg = out.str();
  CHECK(svg.size() < 3'000'000);
  CHECK(xml_problem(svg).empty());
  CHECK_THAT(svg, Catch::Contains("drawn in 2-pixel columns"));
  CHECK(count_of(svg, "<rect") < 40'000);
}

TEST_CASE("courier-trace: colours that share a pixel column share the row's height", "[tools]") {
  // 1000 forward/sample pairs in 10 us: at 1220 pixels every column holds both.
  trace t;
  t.origin = "shared.jsonl";
  t.names = {"engine", "forward", "sample", "step_plan"};
  for (std::int64_t i = 0; i < 1000; ++i) {
    span parent;
    parent.ts_ns = i * 10;
    parent.dur_ns = 10;
    parent.msg = 3;
    span forward = parent;
    forward.dur_ns = 6;
    forward.msg = 1;
    span sample = parent;
    sample.ts_ns += 6;
    sample.dur_ns = 4;
    sample.msg = 2;
    t.spans.insert(t.spans.end(), {parent, forward, sample});
  }
  std::ostringstream out;
  write_svg_plot(t, out);
  const std::string svg = out.str();
  // Row 0: step_plan at full height (12 px); row 1: forward and sample at 6 px each.
  CHECK(count_of(svg, R"(height="12.0" fill="#e15759"><title>engine/step_plan: 1000 spans)") == 1);
  CHECK(count_of(svg, R"(height="6.0" fill="#4e79a7"><title>engine/forward: 1000 spans)") == 1);
  CHECK(count_of(svg, R"(height="6.0" fill="#f28e2b"><title>engine/sample: 1000 spans)") == 1);
}

}  // namespace courier_test_tools_trace_svg_plot
