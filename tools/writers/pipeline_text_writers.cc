// Table, Markdown and CSV of `modelstat pipeline`: the same rows (stages,
// sum, end to end, timer comparison, frames in flight, per-layer views)
// printed three ways.
#include <fmt/format.h>

#include <algorithm>

#include "modelstat/error.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/pipeline_writers.hpp"

namespace modelstat {
namespace pipeline_detail {

std::string stage_label(const PipelineStage& s) {
  switch (s.kind) {
    case StageKind::Model: return "model (" + s.device + ")";
    case StageKind::HostBusy: return "host: busy " + human_seconds(s.busy_seconds);
    case StageKind::HostModel: return "host model (cpu)";
  }
  return "?";
}

std::optional<double> sum_vs_end_to_end(const PathTiming& staged, const TimingSummary& end_to_end) {
  if (staged.stages.empty() || end_to_end.count == 0 || !(end_to_end.median > 0)) return std::nullopt;
  double sum = 0;
  for (const auto& s : staged.stages) sum += s.time.median;
  return (sum - end_to_end.median) / end_to_end.median;
}

namespace {

using report_detail::Align;
using report_detail::Column;
using report_detail::CsvCell;
using report_detail::CsvTable;
using report_detail::KeyValueBlock;
using report_detail::md_text;
using report_detail::MdTable;
using report_detail::Style;
using report_detail::TextTable;

std::string med(const TimingSummary& t) { return t.count > 0 ? human_seconds(t.median) : "-"; }
std::string pct(const TimingSummary& t, double v) { return t.count > 0 ? human_seconds(v) : "-"; }
std::string cv(const TimingSummary& t) { return t.count > 1 ? fmt::format("{:.1f}%", 100 * t.cv) : "-"; }
std::string signed_pct(const std::optional<double>& f) { return f ? fmt::format("{:+.1f}%", 100 * *f) : "-"; }

// Text columns are left-aligned, figures right-aligned.
bool is_text_column(const std::string& header) {
  return header == "stage" || header == "kind" || header == "clock" || header == "node" || header == "op" ||
         header.empty();
}

double median_sum(const std::vector<StageTiming>& stages) {
  double s = 0;
  for (const auto& st : stages) s += st.time.median;
  return s;
}

// The rows every format prints, in order: (heading, rows), each row a list of cells.
struct Section {
  std::string title;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
};

std::vector<Section> sections(const PipelineResult& r) {
  std::vector<Section> out;
  Section stages{"Stages (pass 2: " + r.staged.description + ")",
                 {"#", "stage", "kind", "clock", "median", "p90", "p99", "CV", "share", "runs"},
                 {},
                 {}};
  const double sum = median_sum(r.staged.stages);
  for (size_t k = 0; k < r.staged.stages.size() && k < r.stages.size(); ++k) {
    const StageTiming& s = r.staged.stages[k];
    stages.rows.push_back({std::to_string(k), s.stage, stage_label(r.stages[k]), s.clock, med(s.time),
                           pct(s.time, s.time.p90), pct(s.time, s.time.p99), cv(s.time),
                           sum > 0 ? fmt::format("{:.1f}%", 100 * s.time.median / sum) : "-",
                           std::to_string(s.time.count)});
  }
  stages.rows.push_back({"", "sum of stage medians", "", "", human_seconds(sum), "", "", "", "", ""});
  stages.rows.push_back({"", "end to end (pass 1, clean path)", "", "", med(r.end_to_end),
                         pct(r.end_to_end, r.end_to_end.p90), pct(r.end_to_end, r.end_to_end.p99), cv(r.end_to_end),
                         "", std::to_string(r.end_to_end.count)});
  stages.notes.push_back("sum of stages vs end to end: " + signed_pct(sum_vs_end_to_end(r.staged, r.end_to_end)) +
                         " (pass 2's own end to end, first stage's start to last stage's end: " +
                         med(r.staged.end_to_end) + ")");
  out.push_back(stages);

  if (!r.comparison.empty()) {
    Section c{"Timer comparison (--timer-comparison): medians, the three ways interleaved iteration by iteration", {"stage"}, {}, {}};
    for (const auto& m : r.comparison) c.headers.push_back(m.method + (m.method == "host timer, no sync" ? " (enqueue only)" : ""));
    for (size_t k = 0; k < r.stages.size(); ++k) {
      std::vector<std::string> row{r.stages[k].name};
      for (const auto& m : r.comparison) row.push_back(k < m.stages.size() ? med(m.stages[k].time) : "-");
      c.rows.push_back(row);
    }
    std::vector<std::string> sums{"sum of stages"}, ends{"end to end"};
    for (const auto& m : r.comparison) {
      sums.push_back(human_seconds(median_sum(m.stages)));
      ends.push_back(med(m.end_to_end));
    }
    c.rows.push_back(sums);
    c.rows.push_back(ends);
    for (const auto& m : r.comparison) c.notes.push_back(m.method + ": " + m.description);
    c.notes.push_back(r.comparison_note);
    out.push_back(c);
  }

  if (r.in_flight) {
    const InFlightResult& f = *r.in_flight;
    Section s{fmt::format("Frames in flight (--in-flight {}): {:.2f} frames/s", f.frames_in_flight, f.throughput),
              {"#", "stage", "service median", "p90", "CV", "bound (frames/s)", ""},
              {},
              {}};
    for (size_t k = 0; k < f.stages.size(); ++k) {
      const auto& st = f.stages[k];
      s.rows.push_back({std::to_string(k), st.stage, med(st.time), pct(st.time, st.time.p90), cv(st.time),
                        st.time.median > 0 ? fmt::format("{:.2f}", 1 / st.time.median) : "-",
                        int(k) == f.bottleneck_stage ? "bottleneck" : ""});
    }
    s.rows.push_back({"", "frame latency", med(f.latency), pct(f.latency, f.latency.p90), cv(f.latency),
                      "", "p99 " + pct(f.latency, f.latency.p99)});
    s.notes.push_back(fmt::format("throughput {:.2f} frames/s ({} frames in {:.2f} s after warm-up); {}", f.throughput,
                                  f.frames, f.measured_seconds, f.latency.stop_reason));
    if (f.bottleneck_stage >= 0 && size_t(f.bottleneck_stage) < f.stages.size())
      s.notes.push_back(fmt::format("bottleneck: stage '{}' (median service time {}: at most {:.2f} frames/s)",
                                    f.stages[size_t(f.bottleneck_stage)].stage,
                                    human_seconds(f.stages[size_t(f.bottleneck_stage)].time.median),
                                    f.bottleneck_bound));
    s.notes.push_back("mechanism: " + f.mechanism);
    s.notes.push_back("threads: " + f.threads);
    out.push_back(s);
  }

  for (const StageLayers& l : r.layers) {
    Section s{"Layers of stage '" + l.stage + "' (--layers: its own instrumented pass, outside the path; whole " +
                  med(l.whole) + ", layer sum " + med(l.layer_sum) + ")",
              {"#", "node", "op", "median", "share"},
              {},
              {}};
    const double lsum = [&] {
      double x = 0;
      for (const auto& t : l.layers) x += t.time.median;
      return x;
    }();
    for (const auto& t : l.layers)
      s.rows.push_back({std::to_string(t.index), t.name, t.op_type, med(t.time),
                        lsum > 0 ? fmt::format("{:.1f}%", 100 * t.time.median / lsum) : "-"});
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> context_lines(const PipelineResult& r) {
  const RunContext& c = r.context;
  return {c.device_name + " | " + c.runtime_version + (c.driver_version.empty() ? "" : " | driver " + c.driver_version),
          "LibTorch " + c.torch_version + " | intra-op threads " + std::to_string(c.threads) + " | dtype " + c.dtype +
              " | batch " + std::to_string(c.batch) + " | " + c.date + " | " + c.host,
          "timer: " + c.timer + " | " + kPercentileMethod};
}

class TableWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions& o, std::ostream& out) const override {
    const Style style(o.color);
    out << style.bold("modelstat pipeline") << ": " << r.source << " (" << r.stages.size() << " stages)\n";
    for (const auto& line : context_lines(r)) out << "  " << line << "\n";
    out << "  warm-up and stopping rule as `profile`; " << r.end_to_end.stop_reason << "\n";
    for (const Section& s : sections(r)) {
      out << "\n" << style.bold(s.title) << "\n";
      std::vector<Column> cols;
      for (size_t i = 0; i < s.headers.size(); ++i)
        cols.push_back({s.headers[i], is_text_column(s.headers[i]) ? Align::Left : Align::Right, 48});
      TextTable t(cols);
      for (const auto& row : s.rows) t.add_row(row);
      t.print(out, style);
      for (const auto& n : s.notes) out << report_detail::word_wrap(n, 110, "  ", "    ") << "\n";
    }
    if (!r.notices.empty()) {
      out << "\n" << style.bold("Notices") << "\n";
      for (const auto& n : r.notices) out << report_detail::word_wrap(n, 110, "  - ", "    ") << "\n";
    }
  }
};

class MarkdownWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions&, std::ostream& out) const override {
    out << "# modelstat pipeline: " << md_text(r.source) << "\n\n";
    for (const auto& line : context_lines(r)) out << md_text(line) << "  \n";
    out << "\n";
    for (const Section& s : sections(r)) {
      out << "## " << md_text(s.title) << "\n\n";
      std::vector<Align> aligns;
      for (size_t i = 0; i < s.headers.size(); ++i)
        aligns.push_back(is_text_column(s.headers[i]) ? Align::Left : Align::Right);
      std::vector<std::string> headers;
      for (const auto& h : s.headers) headers.push_back(md_text(h));
      MdTable t(headers, aligns);
      for (const auto& row : s.rows) {
        std::vector<std::string> cells;
        for (const auto& c : row) cells.push_back(md_text(c));
        t.add_row(cells);
      }
      t.print(out);
      for (const auto& n : s.notes) out << "- " << md_text(n) << "\n";
      if (!s.notes.empty()) out << "\n";
    }
    for (const auto& n : r.notices) out << "> " << md_text(n) << "\n";
  }
};

// One row per timing: section, method, stage index and name, and its statistics in seconds.
class CsvWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions&, std::ostream& out) const override {
    CsvTable csv(out, {"section", "method", "stage_index", "stage", "kind", "clock", "count", "median_s", "mean_s",
                       "p90_s", "p95_s", "p99_s", "min_s", "max_s", "cv", "throughput_per_s"});
    auto row = [&](const std::string& section, const std::string& method, int index, const std::string& stage,
                   const std::string& kind, const std::string& clock, const TimingSummary& t, double throughput) {
      using C = CsvCell;
      csv.row({C::text(section), C::text(method), index >= 0 ? C::count(index) : C(), C::text(stage), C::text(kind),
               C::text(clock), C::count(t.count), C::real(t.median), C::real(t.mean), C::real(t.p90), C::real(t.p95),
               C::real(t.p99), C::real(t.min), C::real(t.max), C::real(t.cv),
               throughput > 0 ? C::real(throughput) : C()});
    };
    auto path_rows = [&](const std::string& section, const PathTiming& p) {
      for (size_t k = 0; k < p.stages.size(); ++k)
        row(section, p.method, int(k), p.stages[k].stage, k < r.stages.size() ? stage_kind_name(r.stages[k].kind) : "",
            p.stages[k].clock, p.stages[k].time, 0);
      row(section, p.method, -1, "(sum of stages)", "", "", p.stage_sum, 0);
      row(section, p.method, -1, "(end to end)", "", "", p.end_to_end, 0);
    };
    row("end_to_end", "clean path", -1, "(end to end)", "", r.context.timer, r.end_to_end, 0);
    path_rows("staged", r.staged);
    for (const auto& m : r.comparison) path_rows("timer_comparison", m);
    if (r.in_flight) {
      const auto& f = *r.in_flight;
      const std::string method = "in flight " + std::to_string(f.frames_in_flight);
      for (size_t k = 0; k < f.stages.size(); ++k)
        row("in_flight", method, int(k), f.stages[k].stage, k < r.stages.size() ? stage_kind_name(r.stages[k].kind) : "",
            f.stages[k].clock, f.stages[k].time, 0);
      row("in_flight", method, -1, "(frame latency)", "", "", f.latency, f.throughput);
    }
    for (const auto& l : r.layers)
      for (const auto& t : l.layers) row("layers", l.stage, t.index, t.name, t.op_type, "", t.time, 0);
  }
};

}  // namespace

}  // namespace pipeline_detail

std::unique_ptr<PipelineWriter> make_pipeline_writer(const std::string& format) {
  using namespace pipeline_detail;
  return pick_writer<PipelineResult>("pipeline output", format,
                                     {{"table", writer_of<PipelineResult, TableWriter>},
                                      {"json", make_json_writer},
                                      {"csv", writer_of<PipelineResult, CsvWriter>},
                                      {"md", writer_of<PipelineResult, MarkdownWriter>},
                                      {"html", make_html_writer},
                                      {"trace", make_trace_writer}});
}

}  // namespace modelstat
