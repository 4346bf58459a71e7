// make_compare_writer, and the human comparison document that the table and
// Markdown writers render. Formatting only: every number and verdict is in the
// Comparison already.
#include <fmt/format.h>

#include <cmath>

#include "modelstat/error.hpp"
#include "tools/writers/compare_writers.hpp"

namespace modelstat {

std::unique_ptr<CompareWriter> make_compare_writer(const std::string& format) {
  using report::compare_document;
  return pick_writer<Comparison>("compare", format,
                                 {{"table", report_detail::document_table_writer<Comparison, compare_document>},
                                  {"json", report::make_compare_json_writer},
                                  {"md", report_detail::document_markdown_writer<Comparison, compare_document>}});
}

namespace report {

using report_detail::Align;
using report_detail::Column;
using report_detail::human_seconds;
using report_detail::LineStyle;
using report_detail::Document;
using report_detail::DocumentSection;
using report_detail::signed_percent;

std::string p_text(double p) {
  if (!std::isfinite(p)) return "-";
  if (p < 1e-4) return "<0.0001";
  return fmt::format("{:.2g}", p);
}

std::string ci_text(const SampleDelta& d) {
  if (!std::isfinite(d.ratio_ci_low) || !std::isfinite(d.ratio_ci_high)) return "-";
  return fmt::format("{:.3f}-{:.3f}", d.ratio_ci_low, d.ratio_ci_high);
}

std::string threshold_text(double threshold) {
  return fmt::format("{:g}%", threshold * 100.0);
}

// What the verdict means for this delta, in words.
std::string verdict_text(const SampleDelta& d, const CompareOptions& o) {
  switch (d.verdict) {
    case Verdict::Regression:
      return "REGRESSION";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::NoData:
      return "no data";
    case Verdict::Unchanged:
      break;
  }
  return d.significant ? "within " + threshold_text(o.threshold) : "not significant";
}

namespace {

std::string run_text(const std::string& origin, const std::string& model, const RunContext& c) {
  std::string s = origin;
  if (!model.empty()) s += ": " + model;
  s += fmt::format(", {} ({}), {}, batch {}, {} thread{}", c.device_name, c.device_kind, c.dtype, c.batch,
                   c.threads, c.threads == 1 ? "" : "s");
  if (!c.date.empty()) s += ", " + c.date;
  return s;
}

}  // namespace

std::string gate_summary(const Comparison& c) {
  const CompareOptions& o = c.options;
  const auto one = [&](const std::string& what, const SampleDelta& d) {
    return fmt::format("{} {} ({} -> {}, p {}, ratio CI {})", what, signed_percent(d.delta),
                       human_seconds(d.median_base), human_seconds(d.median_new), p_text(d.p_value),
                       ci_text(d));
  };
  if (!c.gate_failed()) {
    return fmt::format("no regression beyond {}: {}", threshold_text(o.threshold),
                       one("whole model", c.whole) + ", " + verdict_text(c.whole, o));
  }
  std::vector<std::string> parts;
  if (c.whole_regressed) parts.push_back(one("whole model", c.whole));
  for (int k : c.gated_node_regressions) {
    const NodeDelta& n = c.nodes[static_cast<size_t>(k)];
    parts.push_back(one("node " + report_detail::node_ref(n.name, n.index_new, 48), n.time));
  }
  return fmt::format("regression beyond {}: {}", threshold_text(o.threshold),
                     report_detail::join(parts, "; "));
}

Document compare_document(const Comparison& c, const ReportOptions& options) {
  const CompareOptions& o = c.options;
  Document doc;
  doc.title = "modelstat compare: " + c.new_origin + " against " + c.base_origin;

  report_detail::add_warning_section(doc, "Warnings", c.warnings);

  {
    DocumentSection s;
    s.title = "Runs";
    s.fields.emplace_back("base", run_text(c.base_origin, c.base_model_path, c.base_context));
    s.fields.emplace_back("new", run_text(c.new_origin, c.new_model_path, c.new_context));
    s.fields.emplace_back(
        "test",
        fmt::format("medians; two-sided Mann-Whitney U p-value (exact for small samples without ties); "
                    "bootstrap {:g}% CI of new/base median ratio ({} resamples, seed {})",
                    (1.0 - o.alpha) * 100.0, o.resamples, o.seed));
    s.fields.emplace_back("regression",
                          fmt::format("slower by more than {} with p < {:g} and the ratio CI above 1",
                                      threshold_text(o.threshold), o.alpha));
    s.fields.emplace_back("gate", o.per_node_gate
                                      ? fmt::format("whole model, and every node with at least {:g}% of "
                                                    "the per-layer time",
                                                    o.gate_min_share * 100.0)
                                      : std::string("whole model"));
    doc.sections.push_back(std::move(s));
  }

  {
    const SampleDelta& w = c.whole;
    DocumentSection s;
    s.title = "Whole model";
    s.fields.emplace_back("median", fmt::format("{} -> {} ({})", human_seconds(w.median_base),
                                                human_seconds(w.median_new), signed_percent(w.delta)));
    s.fields.emplace_back("samples", fmt::format("{} base, {} new", w.count_base, w.count_new));
    s.fields.emplace_back(
        "p-value", fmt::format("{} ({})", p_text(w.p_value), w.exact_p ? "exact" : "normal approximation"));
    s.fields.emplace_back("new/base ratio", fmt::format("{:.3f}, {:g}% CI {}", w.median_new / w.median_base,
                                                        (1.0 - o.alpha) * 100.0, ci_text(w)));
    s.fields.emplace_back("verdict", verdict_text(w, o));
    doc.sections.push_back(std::move(s));
  }

  const size_t shown = std::min(c.ranked_nodes.size(), static_cast<size_t>(std::max(0, options.top)));
  if (shown > 0) {
    DocumentSection s;
    s.title = fmt::format("Nodes: {} of {} (regressions, improvements, then by change; matched by {})", shown,
                          c.nodes.size(), c.matched_by);
    s.columns = {{"node", Align::Left, 48},  {"op", Align::Left, 20}, {"share", Align::Right},
                 {"base", Align::Right},     {"new", Align::Right},   {"delta", Align::Right},
                 {"ratio CI", Align::Right}, {"p", Align::Right},     {"verdict", Align::Left}};
    for (size_t i = 0; i < shown; ++i) {
      const NodeDelta& n = c.nodes[static_cast<size_t>(c.ranked_nodes[i])];
      const std::string name = n.new_name.empty() ? n.name : n.name + " / " + n.new_name;
      const double share = std::isfinite(n.share_base) ? n.share_base : n.share_new;
      s.rows.push_back({name, n.op_type, report_detail::percent_of(share, 1.0),
                        human_seconds(n.time.median_base), human_seconds(n.time.median_new),
                        signed_percent(n.time.delta), ci_text(n.time), p_text(n.time.p_value),
                        verdict_text(n.time, o)});
      s.highlight.push_back(n.time.verdict == Verdict::Regression);
    }
    s.lines.push_back("share: of the base run's per-layer time (sum of medians)");
    if (shown < c.nodes.size())
      s.lines.push_back(
          fmt::format("{} more nodes: --top N lists more, -f json lists all", c.nodes.size() - shown));
    s.line_style = LineStyle::Dim;
    doc.sections.push_back(std::move(s));
  }

  const auto unmatched = [&](const char* title, const std::vector<UnmatchedNode>& nodes) {
    if (nodes.empty()) return;
    DocumentSection s;
    s.title = title;
    s.columns = {{"node", Align::Left, 60}, {"op", Align::Left, 20}, {"median", Align::Right}};
    for (const UnmatchedNode& n : nodes) s.rows.push_back({n.name, n.op_type, human_seconds(n.median)});
    doc.sections.push_back(std::move(s));
  };
  unmatched("Only in the base run", c.only_in_base);
  unmatched("Only in the new run", c.only_in_new);

  report_detail::add_warning_section(doc, "Notices", c.notices);

  DocumentSection result;
  result.title = "Result";
  result.lines.push_back((c.gate_failed() ? "FAIL: " : "PASS: ") + gate_summary(c));
  doc.sections.push_back(std::move(result));
  return doc;
}

}  // namespace report
}  // namespace modelstat
