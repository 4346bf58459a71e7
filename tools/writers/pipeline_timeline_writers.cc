// The pipeline's timelines, as a Chrome trace (Trace Event Format, "JSON
// Object Format": complete "X" events, ts/dur in microseconds) and as a
// self-contained HTML page (inline SVG, no external resource). Both draw one
// track per stage: process 1 is the path run one iteration at a time (pass 2:
// events between stages on a GPU, the host clock on the CPU), process 2, with
// --in-flight on the CPU, the frames in flight, where stages of different
// frames overlap.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tools/writers/pipeline_writers.hpp"
#include "tools/writers/svg_chart.hpp"

namespace modelstat {
namespace pipeline_detail {
namespace {

using Json = nlohmann::ordered_json;
using report::svg::escape;
using report::svg::num;

struct Timeline {
  int pid = 1;
  std::string title;
  const std::vector<TimelineSpan>* spans = nullptr;
  bool frames = false;  // label spans "frame N" (in flight) rather than "iteration N"
};

std::vector<Timeline> timelines(const PipelineResult& r) {
  std::vector<Timeline> out;
  out.push_back({1, "path, one iteration at a time (" + r.staged.description + ")", &r.timeline, false});
  if (r.in_flight && !r.in_flight->timeline.empty())
    out.push_back({2, fmt::format("{} frames in flight ({})", r.in_flight->frames_in_flight, r.in_flight->mechanism),
                   &r.in_flight->timeline, true});
  return out;
}

Json meta(const char* what, int pid, int tid, const std::string& name) {
  return Json{{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

class TraceWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions&, std::ostream& out) const override {
    Json events = Json::array();
    for (const Timeline& t : timelines(r)) {
      events.push_back(meta("process_name", t.pid, 0, t.title));
      for (size_t k = 0; k < r.stages.size(); ++k) {
        events.push_back(meta("thread_name", t.pid, int(k) + 1, fmt::format("{} {}", k, r.stages[k].name)));
        events.push_back(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", t.pid}, {"tid", int(k) + 1},
                              {"args", {{"sort_index", int(k)}}}});
      }
      for (const TimelineSpan& s : *t.spans) {
        if (s.stage < 0 || size_t(s.stage) >= r.stages.size()) continue;
        events.push_back(Json{{"name", r.stages[size_t(s.stage)].name},
                              {"cat", t.frames ? "frame" : "iteration"},
                              {"ph", "X"},
                              {"ts", s.start * 1e6},
                              {"dur", std::max(0.0, s.end - s.start) * 1e6},
                              {"pid", t.pid},
                              {"tid", s.stage + 1},
                              {"args", {{t.frames ? "frame" : "iteration", s.iteration}}}});
      }
    }
    Json doc{{"traceEvents", events},
             {"displayTimeUnit", "ms"},
             {"otherData",
              {{"tool", "modelstat pipeline"}, {"source", r.source}, {"device", r.context.device_name},
               {"date", r.context.date}}}};
    out << doc.dump(1) << '\n';
  }
};

// One SVG per timeline: a row per stage, a rectangle per span, the frame /
// iteration number inside when it fits.
void svg_timeline(const PipelineResult& r, const Timeline& t, std::ostream& out) {
  double end = 0;
  for (const auto& s : *t.spans) end = std::max(end, s.end);
  if (end <= 0) {
    out << "<p>No timeline recorded.</p>\n";
    return;
  }
  const double left = 160, width = 900, row = 28;
  const double height = row * double(r.stages.size()) + 30;
  static const char* const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"};
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << num(left + width + 20) << "' height='" << num(height)
      << "' role='img'>\n";
  for (size_t k = 0; k < r.stages.size(); ++k)
    out << "<text x='4' y='" << num(row * double(k) + 18) << "' font-size='12'>" << escape(r.stages[k].name)
        << "</text>\n";
  for (const auto& s : *t.spans) {
    if (s.stage < 0 || size_t(s.stage) >= r.stages.size()) continue;
    const double x = left + width * s.start / end, w = std::max(1.0, width * (s.end - s.start) / end);
    const double y = row * double(s.stage) + 4;
    out << "<rect x='" << num(x) << "' y='" << num(y) << "' width='" << num(w) << "' height='" << num(row - 8)
        << "' fill='" << palette[size_t(t.frames ? s.iteration : s.stage) % 7] << "'><title>"
        << escape(r.stages[size_t(s.stage)].name) << (t.frames ? ", frame " : ", iteration ") << s.iteration << ": "
        << escape(human_seconds(s.end - s.start)) << "</title></rect>\n";
    if (w > 24)
      out << "<text x='" << num(x + 3) << "' y='" << num(y + 14) << "' font-size='10' fill='#fff'>" << s.iteration
          << "</text>\n";
  }
  const double axis_y = row * double(r.stages.size()) + 16;
  for (int i = 0; i <= 4; ++i) {
    const double v = end * i / 4;
    out << "<text x='" << num(left + width * i / 4) << "' y='" << num(axis_y) << "' font-size='10'>"
        << escape(seconds_label(v)) << "</text>\n";
  }
  out << "</svg>\n";
}

class HtmlWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions&, std::ostream& out) const override {
    out << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>modelstat pipeline: " << escape(r.source)
        << "</title>\n<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:nth-child(2),th:nth-child(2){text-align:left}"
           "</style></head><body>\n";
    out << "<h1>modelstat pipeline</h1>\n<p>" << escape(r.source) << "<br>" << escape(r.context.device_name) << " | "
        << escape(r.context.timer) << " | threads " << r.context.threads << " | " << escape(r.context.date) << "</p>\n";
    out << "<h2>Stages</h2>\n<table><tr><th>#</th><th>stage</th><th>kind</th><th>median</th><th>p90</th></tr>\n";
    for (size_t k = 0; k < r.staged.stages.size() && k < r.stages.size(); ++k) {
      const auto& s = r.staged.stages[k];
      out << "<tr><td>" << k << "</td><td>" << escape(s.stage) << "</td><td>" << escape(stage_label(r.stages[k]))
          << "</td><td>" << escape(human_seconds(s.time.median)) << "</td><td>" << escape(human_seconds(s.time.p90))
          << "</td></tr>\n";
    }
    double sum = 0;
    for (const auto& s : r.staged.stages) sum += s.time.median;
    out << "<tr><td></td><td>sum of stage medians</td><td></td><td>" << escape(human_seconds(sum))
        << "</td><td></td></tr>\n<tr><td></td><td>end to end (clean path)</td><td></td><td>"
        << escape(human_seconds(r.end_to_end.median)) << "</td><td>" << escape(human_seconds(r.end_to_end.p90))
        << "</td></tr>\n</table>\n";
    if (r.in_flight) {
      const auto& f = *r.in_flight;
      out << "<h2>Frames in flight</h2>\n<p>" << f.frames_in_flight << " in flight: "
          << escape(fmt::format("{:.2f}", f.throughput)) << " frames/s, latency median "
          << escape(human_seconds(f.latency.median));
      if (f.bottleneck_stage >= 0 && size_t(f.bottleneck_stage) < f.stages.size())
        out << "; bottleneck: " << escape(f.stages[size_t(f.bottleneck_stage)].stage);
      out << "<br>" << escape(f.threads) << "</p>\n";
    }
    for (const Timeline& t : timelines(r)) {
      out << "<h2>Timeline: " << escape(t.title) << "</h2>\n";
      svg_timeline(r, t, out);
    }
    if (!r.notices.empty()) {
      out << "<h2>Notices</h2>\n<ul>\n";
      for (const auto& n : r.notices) out << "<li>" << escape(n) << "</li>\n";
      out << "</ul>\n";
    }
    out << "</body></html>\n";
  }
};

}  // namespace

std::unique_ptr<PipelineWriter> make_html_writer() { return std::make_unique<HtmlWriter>(); }
std::unique_ptr<PipelineWriter> make_trace_writer() { return std::make_unique<TraceWriter>(); }

}  // namespace pipeline_detail
}  // namespace modelstat
