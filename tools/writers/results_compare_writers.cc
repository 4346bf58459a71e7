// `modelstat results compare` as a table, JSON or Markdown. The verdicts and
// figures are compare_runs' (via compare_results); the pieces of text are the
// ones `modelstat compare` prints (compare_writers.hpp).
#include <fmt/format.h>

#include <map>

#include "analyzer/measurements/json_document.hpp"
#include "modelstat/error.hpp"
#include "tools/writers/compare_writers.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/results_writers.hpp"
#include "tools/writers/units.hpp"

namespace modelstat::report {

using report_detail::Align;
using report_detail::Column;
using report_detail::md_text;
using report_detail::signed_percent;
using suite::CellComparison;
using suite::ResultsComparison;

namespace {

std::vector<std::string> header() {
  return {"cell", "base", "new", "base median", "new median", "delta", "p", "ratio CI", "verdict"};
}

std::vector<std::string> row(const ResultsComparison& c, const CellComparison& x) {
  const auto side = [](const std::string& machine, const std::string& status) {
    return status == "ok" ? machine : machine + " (failed)";
  };
  return {x.label,
          side(x.base_machine, x.base_status),
          side(x.new_machine, x.new_status),
          human_seconds(x.whole.median_base),
          human_seconds(x.whole.median_new),
          signed_percent(x.whole.delta),
          p_text(x.whole.p_value),
          ci_text(x.whole),
          verdict_text(x.whole, c.options)};
}

std::string title(const ResultsComparison& c) {
  return fmt::format("{} -> {}: {} cells compared: {} regressions, {} improvements, {} unchanged, {} without data "
                     "(threshold {}, alpha {:g})",
                     c.base.text(), c.next.text(), c.cells.size(), c.regressions, c.improvements, c.unchanged, c.no_data,
                     threshold_text(c.options.threshold), c.options.alpha);
}

// Each distinct warning once, with how many cells it concerns; past kMostWarnings, a count
// (a suite of noisy cells would bury the table; -f json keeps every cell's warnings).
constexpr size_t kMostWarnings = 6;
std::vector<std::string> warnings(const ResultsComparison& c) {
  std::map<std::string, int> count;
  std::vector<std::string> order;
  size_t cells_warned = 0;
  for (const CellComparison& x : c.cells) {
    cells_warned += x.warnings.empty() ? 0 : 1;
    for (const std::string& w : x.warnings)
      if (count[w]++ == 0) order.push_back(w);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < order.size() && i < kMostWarnings; ++i)
    out.push_back(count[order[i]] > 1 ? fmt::format("{} ({} cells)", order[i], count[order[i]]) : order[i]);
  if (order.size() > kMostWarnings)
    out.push_back(fmt::format("... and {} more warnings; {} of {} cells have some (-f json lists each cell's)",
                              order.size() - kMostWarnings, cells_warned, c.cells.size()));
  return out;
}

void write_table(const ResultsComparison& c, std::ostream& out, bool markdown) {
  const std::vector<std::string> h = header();
  if (markdown) {
    out << "## " << md_text(title(c)) << "\n\n";
    std::vector<Align> aligns(h.size(), Align::Right);
    aligns[0] = aligns[1] = aligns[2] = aligns[8] = Align::Left;
    report_detail::MdTable t(h, aligns);
    for (const CellComparison& x : c.cells) {
      std::vector<std::string> cells = row(c, x);
      for (auto& s : cells) s = md_text(s);
      t.add_row(cells);
    }
    t.print(out);
    for (const std::string& w : warnings(c)) out << "- warning: " << md_text(w) << "\n";
  } else {
    out << title(c) << "\n";
    std::vector<Column> columns;
    for (size_t i = 0; i < h.size(); ++i)
      columns.push_back({h[i], i == 0 || i == 1 || i == 2 || i == 8 ? Align::Left : Align::Right, i == 0 ? 40u : 0u});
    report_detail::TextTable t(columns);
    for (const CellComparison& x : c.cells) t.add_row(row(c, x), x.whole.verdict == Verdict::Regression);
    if (!t.empty()) t.print(out, report_detail::Style(false));
    for (const std::string& w : warnings(c)) out << "  warning: " << w << "\n";
  }
  for (const std::string& s : c.only_base) out << (markdown ? "- " : "  ") << "only in " << c.base.text() << ": " << s << "\n";
  for (const std::string& s : c.only_new) out << (markdown ? "- " : "  ") << "only in " << c.next.text() << ": " << s << "\n";
  out << (markdown ? "\n**" : "") << results_gate_summary(c) << (markdown ? "**\n" : "\n");
}

void write_json(const ResultsComparison& c, std::ostream& out) {
  Json j = document_head(kResultsJsonSchemaVersion, "results-compare");
  j["test"] = Json{{"threshold", c.options.threshold},
                   {"alpha", c.options.alpha},
                   {"ratio_ci_confidence", 1.0 - c.options.alpha},
                   {"bootstrap_resamples", c.options.resamples},
                   {"bootstrap_seed", c.options.seed}};
  j["base"] = c.base.text();
  j["new"] = c.next.text();
  j["regressions"] = c.regressions;
  j["improvements"] = c.improvements;
  j["unchanged"] = c.unchanged;
  j["no_data"] = c.no_data;
  j["gate_failed"] = c.gate_failed();
  Json cells = Json::array();
  for (const CellComparison& x : c.cells) {
    Json cell = Json{{"cell_key", x.cell_key}, {"model", x.model},         {"label", x.label},
                     {"base_machine", x.base_machine}, {"new_machine", x.new_machine}, {"base_run", x.base_run},
                     {"new_run", x.new_run},   {"base_status", x.base_status}, {"new_status", x.new_status}};
    put_delta(cell, x.whole);
    cell["warnings"] = x.warnings;
    cells.push_back(std::move(cell));
  }
  j["cells"] = std::move(cells);
  j["only_in_base"] = c.only_base;
  j["only_in_new"] = c.only_new;
  out << j.dump(2) << "\n";
}

}  // namespace

std::string results_gate_summary(const ResultsComparison& c) {
  if (!c.gate_failed())
    return fmt::format("no regression beyond {} ({} -> {})", threshold_text(c.options.threshold), c.base.text(),
                       c.next.text());
  std::string list;
  int shown = 0;
  for (const CellComparison& x : c.cells) {
    if (x.whole.verdict != Verdict::Regression) continue;
    if (shown++ == 5) {
      list += ", ...";
      break;
    }
    list += (list.empty() ? "" : ", ") + x.label + " " + signed_percent(x.whole.delta);
  }
  return fmt::format("{} regression{} beyond {} ({} -> {}): {}", c.regressions, c.regressions == 1 ? "" : "s",
                     threshold_text(c.options.threshold), c.base.text(), c.next.text(), list);
}

void write_results_comparison(const ResultsComparison& c, const std::string& format, std::ostream& out) {
  if (format == "json") return write_json(c, out);
  if (format == "table" || format == "md") return write_table(c, out, format == "md");
  throw_usage("unknown format '" + format + "' (table, json, md)");
}

}  // namespace modelstat::report
