// Generation, HTML: one self-contained page (no external resource): the
// sections of generation_document as HTML (the same content as the table and
// Markdown), and an inline-SVG chart of the decode step time against context
// with its least-squares line, drawn under the step-curve section. Every text
// from the model or the machine is escaped.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "tools/writers/generation_writers.hpp"
#include "tools/writers/svg_chart.hpp"

namespace modelstat::report_detail {

namespace {

using report::svg::escape;
using report::svg::num;

constexpr const char* kStyle = R"CSS(
body { margin:0; background:#f5f7fa; color:#1f2933;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 40px; }
h1 { font-size: 20px; margin: 0 0 12px; }
h2 { font-size: 16px; margin: 26px 0 8px; }
section { background:#fff; border:1px solid #e4e7eb; border-radius:8px; padding:10px 16px; margin-top:14px; }
dl { display:grid; grid-template-columns:max-content 1fr; gap:2px 16px; margin:6px 0; font-size:13px; }
dt { color:#616e7c; } dd { margin:0; }
table { border-collapse:collapse; font-size:13px; margin:6px 0; }
th, td { padding:3px 10px; border-bottom:1px solid #e4e7eb; text-align:right; white-space:nowrap; }
th.l, td.l { text-align:left; } tr.hl td { background:#fdecea; font-weight:600; }
p.note { color:#616e7c; font-size:12.5px; margin:6px 0; } p.warn { color:#8a5a00; }
svg text { font-size:11px; fill:#616e7c; } .grid { stroke:#e4e7eb; } .axis { stroke:#9aa5b1; }
.pt { fill:#2f6fb0; } .fit { stroke:#d9480f; stroke-width:1.5; fill:none; stroke-dasharray:5 3; }
)CSS";

void write_section(std::ostream& out, const DocumentSection& s) {
  out << "<section>\n";
  if (!s.title.empty()) out << "<h2>" << escape(s.title) << "</h2>\n";
  if (!s.fields.empty()) {
    out << "<dl>\n";
    for (const auto& [key, value] : s.fields) out << "<dt>" << escape(key) << "</dt><dd>" << escape(value) << "</dd>\n";
    out << "</dl>\n";
  }
  if (!s.columns.empty()) {
    out << "<table>\n<tr>";
    for (const Column& c : s.columns)
      out << "<th" << (c.align == Align::Left ? " class=\"l\"" : "") << ">" << escape(c.header) << "</th>";
    out << "</tr>\n";
    for (size_t i = 0; i < s.rows.size(); ++i) {
      out << (i < s.highlight.size() && s.highlight[i] ? "<tr class=\"hl\">" : "<tr>");
      for (size_t k = 0; k < s.rows[i].size(); ++k) {
        const bool left = k < s.columns.size() && s.columns[k].align == Align::Left;
        out << "<td" << (left ? " class=\"l\"" : "") << ">" << escape(s.rows[i][k]) << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  for (const std::string& line : s.lines)
    out << "<p class=\"note" << (s.line_style == LineStyle::Warn ? " warn" : "") << "\">" << escape(line) << "</p>\n";
  out << "</section>\n";
}

// Decode step time (median over the generations) at each context, and the
// least-squares line of the record.
void step_chart(std::ostream& out, const GenerationResult& r) {
  std::vector<const ContextPoint*> points;
  double hi = 0;
  for (const ContextPoint& p : r.step_curve)
    if (std::isfinite(p.median_seconds) && p.median_seconds > 0) {
      points.push_back(&p);
      hi = std::max(hi, p.median_seconds);
    }
  if (points.size() < 2) return;
  const report::svg::Frame f{70, 14, 860, 300};
  const report::svg::Scale x = report::svg::Scale::linear(double(points.front()->context),
                                                          double(points.back()->context), f.left, f.right, 8);
  const report::svg::Scale y = report::svg::Scale::linear(0, hi, f.bottom, f.top, 5);
  out << "<section>\n<h2>Decode step time against context</h2>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"880\" height=\"340\" role=\"img\" aria-label=\"decode "
         "step time against context\">\n";
  report::svg::draw_axes(
      out, f, x, y, [](double v) { return fmt::format("{:.0f}", v); }, report::svg::seconds_labels_for(y),
      "context (tokens)", "decode step (median)");
  for (const ContextPoint* p : points)
    out << "<circle class=\"pt\" cx=\"" << num(x(double(p->context))) << "\" cy=\"" << num(y(p->median_seconds))
        << "\" r=\"2.5\"><title>context " << p->context << ": " << escape(human_seconds(p->median_seconds))
        << "</title></circle>\n";
  auto line_at = [&](double c) { return r.step_intercept_seconds + r.step_slope_seconds_per_token * c; };
  const double c0 = double(points.front()->context), c1 = double(points.back()->context);
  out << "<polyline class=\"fit\" points=\"" << num(x(c0)) << "," << num(y(line_at(c0))) << " " << num(x(c1)) << ","
      << num(y(line_at(c1))) << "\"/>\n</svg>\n";
  out << "<p class=\"note\">Dashed: the least-squares line, " << escape(slope_text(r.step_slope_seconds_per_token))
      << " of context.</p>\n</section>\n";
}

class GenerationHtmlWriter final : public GenerationWriter {
 public:
  void write(const GenerationResult& r, const ReportOptions& options, std::ostream& out) const override {
    const Document doc = generation_document(r, options);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << escape(doc.title)
        << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n<h1>" << escape(doc.title)
        << "</h1>\n";
    for (const DocumentSection& s : doc.sections) {
      write_section(out, s);
      if (s.title.rfind("Decode step time", 0) == 0) step_chart(out, r);
    }
    out << "</main>\n</body>\n</html>\n";
  }
};

}  // namespace

std::unique_ptr<GenerationWriter> make_generation_html_writer() { return std::make_unique<GenerationHtmlWriter>(); }

}  // namespace modelstat::report_detail
