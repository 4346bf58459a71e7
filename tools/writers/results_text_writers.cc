// `modelstat results` as a table, Markdown, CSV and JSON: one row per result.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "analyzer/measurements/json_document.hpp"
#include "analyzer/measurements/json_input.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/json_stream.hpp"
#include "tools/writers/results_writers.hpp"
#include "tools/writers/units.hpp"

namespace modelstat::report {

const char* const kResultsJsonSchemaVersion = "1.0.0";

using report_detail::Align;
using report_detail::Column;
using report_detail::CsvCell;
using report_detail::CsvTable;
using report_detail::md_text;
using report_detail::signed_percent;
using suite::ResultRow;

namespace {

std::string opt_seconds(const std::optional<double>& s) { return s ? human_seconds(*s) : "-"; }
std::string opt_rate(const std::optional<double>& v) { return v ? rate_text(*v) : "-"; }

std::string threads_text(int threads) { return threads > 0 ? std::to_string(threads) : "all"; }
std::string mode_text(const ResultRow& r) { return r.requests > 0 ? fmt::format("async ({} requests)", r.requests) : "sync"; }

std::string setting_text(const ResultRow& r) { return r.cell().setting(); }

std::string status_text(const ResultRow& r) { return r.status == "ok" ? "ok" : "failed: " + r.error_type; }

// DLI's "parameters" and "infrastructure" columns.
std::string parameters_text(const ResultRow& r) {
  return fmt::format("threads={}; requests={}; dtype={}; fusion={}; device={}", threads_text(r.threads),
                     r.requests > 0 ? r.requests : 1, r.dtype, r.fusion, r.device);
}
std::string infrastructure_text(const ResultRow& r) {
  std::string s = fmt::format("{}: {} ({} CPUs, {})", r.machine_name, r.cpu_model, r.cores, human_bytes(r.memory_bytes));
  if (!r.gpu.empty()) s += ", " + r.gpu;
  return s;
}

std::string page_title(const ResultsPage& p) {
  std::string s = fmt::format("{} results in {}", p.total, p.database);
  if (!p.filter_text.empty()) s += " (" + p.filter_text + ")";
  s += p.latest_only ? "; the latest per cell and machine" : "; every run";
  if (p.offset > 0 || static_cast<int64_t>(p.rows.size()) < p.total)
    s += fmt::format("; rows {}-{}", p.offset + 1, p.offset + static_cast<int64_t>(p.rows.size()));
  return s;
}

struct TextColumn {
  Column column;
  std::function<std::string(const ResultRow&)> cell;
};

std::vector<TextColumn> text_columns() {
  return {
      {{"model", Align::Left, 28}, [](const ResultRow& r) { return r.model; }},
      {{"setting", Align::Left, 40}, setting_text},
      {{"machine", Align::Left, 24}, [](const ResultRow& r) { return r.machine_name; }},
      {{"status", Align::Left, 40}, status_text},
      {{"median"}, [](const ResultRow& r) { return opt_seconds(r.median_s); }},
      {{"p90"}, [](const ResultRow& r) { return opt_seconds(r.p90_s); }},
      {{"CV"}, [](const ResultRow& r) { return r.cv ? fmt::format("{:.1f}%", *r.cv * 100) : "-"; }},
      {{"FPS"}, [](const ResultRow& r) { return opt_rate(r.fps); }},
      {{"batch FPS"}, [](const ResultRow& r) { return opt_rate(r.batch_fps); }},
      {{"forecast"}, [](const ResultRow& r) { return opt_seconds(r.forecast_s); }},
      {{"fcst err"}, [](const ResultRow& r) { return r.forecast_error ? signed_percent(*r.forecast_error) : "-"; }},
      {{"date", Align::Left}, [](const ResultRow& r) { return r.finished_at.substr(0, 10); }},
  };
}

}  // namespace

void write_results_table(const ResultsPage& page, bool color, std::ostream& out) {
  const report_detail::Style style(color);
  out << style.bold(page_title(page)) << "\n";
  const std::vector<TextColumn> columns = text_columns();
  std::vector<Column> headers;
  for (const auto& c : columns) headers.push_back(c.column);
  report_detail::TextTable table(headers);
  for (const ResultRow& r : page.rows) {
    std::vector<std::string> cells;
    for (const auto& c : columns) cells.push_back(c.cell(r));
    table.add_row(cells, r.status != "ok");
  }
  if (!table.empty()) table.print(out, style);
  for (const ResultRow& r : page.rows)
    if (r.status != "ok") out << "  " << r.model << " " << setting_text(r) << " on " << r.machine_name << ": " << r.error << "\n";
}

void write_results_markdown(const ResultsPage& page, std::ostream& out) {
  out << "## " << md_text(page_title(page)) << "\n\n";
  const std::vector<TextColumn> columns = text_columns();
  std::vector<std::string> headers;
  std::vector<Align> aligns;
  for (const auto& c : columns) {
    headers.push_back(c.column.header);
    aligns.push_back(c.column.align);
  }
  report_detail::MdTable table(headers, aligns);
  for (const ResultRow& r : page.rows) {
    std::vector<std::string> cells;
    for (const auto& c : columns) cells.push_back(md_text(c.cell(r)));
    table.add_row(cells);
  }
  table.print(out);
}

void write_results_csv(const ResultsPage& page, std::ostream& out) {
  struct CsvColumn {
    const char* header;
    std::function<CsvCell(const ResultRow&)> cell;
  };
  const std::vector<CsvColumn> columns = {
      // DLI's columns (seed 004), in its order.
      {"status", [](const ResultRow& r) { return CsvCell::text(r.status); }},
      {"task", [](const ResultRow& r) { return CsvCell::text(r.task); }},
      {"topology", [](const ResultRow& r) { return CsvCell::text(r.model); }},
      {"framework", [](const ResultRow& r) { return CsvCell::text(r.runtime_version.empty() ? r.runtime : r.runtime_version); }},
      {"input shapes", [](const ResultRow& r) { return CsvCell::text(r.inputs); }},
      {"precision", [](const ResultRow& r) { return CsvCell::text(r.precision.empty() ? r.dtype : r.precision); }},
      {"batch size", [](const ResultRow& r) { return CsvCell::count(r.batch); }},
      {"mode", [](const ResultRow& r) { return CsvCell::text(mode_text(r)); }},
      {"parameters", [](const ResultRow& r) { return CsvCell::text(parameters_text(r)); }},
      {"infrastructure", [](const ResultRow& r) { return CsvCell::text(infrastructure_text(r)); }},
      {"average time of a single pass (s)", [](const ResultRow& r) { return CsvCell::real(r.average_pass_s); }},
      {"latency (s)", [](const ResultRow& r) { return CsvCell::real(r.median_s); }},
      {"FPS", [](const ResultRow& r) { return CsvCell::real(r.fps); }},
      {"batch FPS", [](const ResultRow& r) { return CsvCell::real(r.batch_fps); }},
      {"latency per token (s)", [](const ResultRow& r) { return CsvCell::real(r.latency_per_token_s); }},
      {"error type", [](const ResultRow& r) { return CsvCell::text(r.error_type); }},
      // modelstat's.
      {"error", [](const ResultRow& r) { return CsvCell::text(r.error); }},
      {"machine", [](const ResultRow& r) { return CsvCell::text(r.machine_name); }},
      {"machine id", [](const ResultRow& r) { return CsvCell::text(r.machine_id); }},
      {"threads", [](const ResultRow& r) { return CsvCell::text(threads_text(r.threads)); }},
      {"requests", [](const ResultRow& r) { return CsvCell::count(r.requests); }},
      {"dtype", [](const ResultRow& r) { return CsvCell::text(r.dtype); }},
      {"fusion", [](const ResultRow& r) { return CsvCell::text(r.fusion); }},
      {"device", [](const ResultRow& r) { return CsvCell::text(r.device); }},
      {"runtime", [](const ResultRow& r) { return CsvCell::text(r.runtime); }},
      {"bindings", [](const ResultRow& r) { return CsvCell::text(r.bindings); }},
      {"async latency (s)", [](const ResultRow& r) { return CsvCell::real(r.async_median_s); }},
      {"mean (s)", [](const ResultRow& r) { return CsvCell::real(r.mean_s); }},
      {"p90 (s)", [](const ResultRow& r) { return CsvCell::real(r.p90_s); }},
      {"p99 (s)", [](const ResultRow& r) { return CsvCell::real(r.p99_s); }},
      {"cv", [](const ResultRow& r) { return CsvCell::real(r.cv); }},
      {"samples", [](const ResultRow& r) { return CsvCell::count(r.samples); }},
      {"params", [](const ResultRow& r) { return CsvCell::count(r.params); }},
      {"MACs", [](const ResultRow& r) { return CsvCell::count(r.macs); }},
      {"FLOPs", [](const ResultRow& r) { return CsvCell::count(r.flops); }},
      {"bytes", [](const ResultRow& r) { return CsvCell::count(r.bytes); }},
      {"forecast (s)", [](const ResultRow& r) { return CsvCell::real(r.forecast_s); }},
      {"forecast error", [](const ResultRow& r) { return CsvCell::real(r.forecast_error); }},
      {"modelstat version", [](const ResultRow& r) { return CsvCell::text(r.modelstat_version); }},
      {"commit", [](const ResultRow& r) { return CsvCell::text(r.modelstat_commit); }},
      {"finished at", [](const ResultRow& r) { return CsvCell::text(r.finished_at); }},
      {"wall (s)", [](const ResultRow& r) { return CsvCell::real(r.wall_s); }},
      {"suite", [](const ResultRow& r) { return CsvCell::text(r.suite); }},
      {"run id", [](const ResultRow& r) { return CsvCell::text(r.run_id); }},
      {"cell key", [](const ResultRow& r) { return CsvCell::text(r.cell_key); }},
  };
  std::vector<std::string> headers;
  for (const CsvColumn& c : columns) headers.push_back(c.header);
  CsvTable csv(out, headers);
  for (const ResultRow& r : page.rows) {
    std::vector<CsvCell> cells;
    for (const CsvColumn& c : columns) cells.push_back(c.cell(r));
    csv.row(cells);
  }
}

void write_results_json(const ResultsPage& page, const std::vector<std::string>& records, std::ostream& out) {
  Json j = document_head(kResultsJsonSchemaVersion, "results");
  j["database"] = page.database;
  j["filter"] = page.filter_text;
  j["latest_only"] = page.latest_only;
  j["total"] = page.total;
  j["offset"] = page.offset;
  j["limit"] = page.limit > 0 ? Json(page.limit) : Json(nullptr);
  Json results = Json::array();
  for (size_t i = 0; i < records.size(); ++i)
    results.push_back(parse_json_document(records[i], page.database + " result " + std::to_string(page.rows[i].result_id)));
  j["results"] = std::move(results);
  out << j.dump(2) << "\n";
}

}  // namespace modelstat::report
