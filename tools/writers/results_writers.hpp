// The writers of `modelstat results` (table, CSV with DLI's columns, JSON,
// Markdown, a self-contained HTML page) and of `modelstat results compare`
// (table, JSON, Markdown). They format rows of the results database and the
// comparison compare_results computed; they compute nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/suite.hpp"

namespace modelstat::report {

// One page of `modelstat results`: the rows selected and what selected them.
struct ResultsPage {
  std::string database;     // the file
  std::string filter_text;  // "model=resnet*, machine=vm" or "" (everything)
  std::string generated;    // when the page was made (ISO 8601)
  int64_t total = 0;        // rows the filter selects (before --limit/--offset)
  int64_t offset = 0, limit = 0;
  bool latest_only = true;
  std::vector<suite::ResultRow> rows;
};

extern const char* const kResultsJsonSchemaVersion;  // the `results -f json` document

void write_results_table(const ResultsPage& page, bool color, std::ostream& out);
void write_results_markdown(const ResultsPage& page, std::ostream& out);
// DLI's columns first (status, task, topology, framework, input shapes,
// precision, batch size, mode, parameters, infrastructure, average time of a
// single pass, latency, FPS, batch FPS, latency per token, error type), then
// modelstat's (docs/suites.md, "CSV").
void write_results_csv(const ResultsPage& page, std::ostream& out);
// records: the stored result documents of page.rows, in order.
void write_results_json(const ResultsPage& page, const std::vector<std::string>& records, std::ostream& out);
// Hands each row to its argument, in the database's order (ResultsDb::each).
using ResultRowSource = std::function<void(const std::function<void(const suite::ResultRow&)>&)>;
// The page: rows = cells, columns = machines, with filters, paging, the best
// setting per model and machine, charts of latency vs threads and throughput vs
// batch, each cell's trend over time and the forecast's error; every row `rows`
// gives is in it (the history too when !page.latest_only), drawn by its script.
// The rows stream by (page.rows is not read), so a million stay small in memory.
void write_results_html(const ResultsPage& page, const ResultRowSource& rows, std::ostream& out);

void write_results_comparison(const suite::ResultsComparison& c, const std::string& format, std::ostream& out);
// "2 regressions beyond 10% (machine=a -> machine=b): resnet18 b1 t1 sync +25.0%, ..."
std::string results_gate_summary(const suite::ResultsComparison& c);

}  // namespace modelstat::report
