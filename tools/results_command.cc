// `modelstat results [DB]` and `modelstat results compare`: what the results
// database holds, filtered, as a table, CSV, JSON, Markdown or an HTML page;
// two machines, commits, dates or runs compared cell by cell with compare's
// significance test, exit 1 on a regression (docs/suites.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "analyzer/suite/cell_runner.hpp"
#include "analyzer/suite/machine.hpp"
#include "analyzer/suite/results_compare.hpp"
#include "analyzer/suite/results_db.hpp"
#include "tools/suite_commands.hpp"
#include "tools/writers/results_writers.hpp"

namespace modelstat::cli {

namespace {

using namespace modelstat::suite;

struct FilterArgs {
  ResultFilter filter;
  int64_t batch = 0;
  int threads = -1;
  bool all_runs = false;
};

void add_filter_flags(CLI::App& cmd, FilterArgs& f) {
  cmd.add_option("--model", f.filter.model, "Models named so (a glob: 'resnet*')");
  cmd.add_option("--machine", f.filter.machine, "Machines named so, or with this id (a glob)");
  cmd.add_option("--suite", f.filter.suite, "Suites named so (a glob)");
  cmd.add_option("--run", f.filter.run, "Run ids (a glob)");
  cmd.add_option("--commit", f.filter.commit, "Results of modelstat commits starting so");
  cmd.add_option("--since", f.filter.since, "Results finished on or after this date (YYYY-MM-DD[THH:MM:SS])");
  cmd.add_option("--until", f.filter.until, "Results finished on or before this date (a whole day when only the date)");
  cmd.add_option("--status", f.filter.status, "ok or failed")->check(CLI::IsMember({"ok", "failed"}));
  cmd.add_option("--runtime", f.filter.runtime, "Runtime (modelstat, or a runner's name; a glob)");
  cmd.add_option("--batch", f.batch, "Cells of this batch size")->check(CLI::PositiveNumber);
  cmd.add_option("--threads", f.threads, "Cells of this thread count (0: all)")->check(CLI::NonNegativeNumber);
}

ResultFilter filter_of(const FilterArgs& f) {
  ResultFilter r = f.filter;
  if (f.batch > 0) r.batch = f.batch;
  if (f.threads >= 0) r.threads = f.threads;
  r.latest_only = !f.all_runs;
  return r;
}

std::string filter_text(const ResultFilter& f) {
  std::string s;
  const auto add = [&](const char* k, const std::string& v) {
    if (!v.empty()) s += (s.empty() ? "" : ", ") + std::string(k) + "=" + v;
  };
  add("model", f.model);
  add("machine", f.machine);
  add("suite", f.suite);
  add("run", f.run);
  add("commit", f.commit);
  add("since", f.since);
  add("until", f.until);
  add("status", f.status);
  add("runtime", f.runtime);
  if (f.batch) add("batch", std::to_string(*f.batch));
  if (f.threads) add("threads", std::to_string(*f.threads));
  return s;
}

// An existing database: reading never creates one.
std::string existing_db(const std::string& given) {
  const std::string path = given.empty() ? default_results_db() : given;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Usage, "no such results database (`modelstat suite run` or `suite collect` writes one)", path);
  return path;
}

struct ResultsArgs {
  std::string db;
  FilterArgs filter;
  OutputArgs output;
  int64_t limit = 0, offset = 0;
};

int run_results(const ResultsArgs& a) {
  ResultsDb db(existing_db(a.db));
  ResultFilter f = filter_of(a.filter);
  report::ResultsPage page;
  page.database = db.path();
  page.filter_text = filter_text(f);
  page.generated = utc_now();
  page.latest_only = f.latest_only;
  page.total = db.count(f);
  f.limit = a.limit;
  f.offset = a.offset;
  page.limit = a.limit;
  page.offset = a.offset;
  const std::string& format = a.output.format;
  if (format != "html") page.rows = db.query(f);
  std::vector<std::string> records;
  if (format == "json") records = db.records(page.rows);
  write_output(a.output.output, [&](std::ostream& out, bool is_tty) {
    if (format == "table") report::write_results_table(page, is_tty && std::getenv("NO_COLOR") == nullptr, out);
    if (format == "csv") report::write_results_csv(page, out);
    if (format == "md") report::write_results_markdown(page, out);
    if (format == "json") report::write_results_json(page, records, out);
    if (format == "html")
      report::write_results_html(page, [&](const std::function<void(const ResultRow&)>& visit) { db.each(f, visit); }, out);
  });
  return 0;
}

struct CompareArgs {
  std::string db, base, next, threshold = "10%", format = "table", output;
  double alpha = 0.05;
  FilterArgs filter;
};

int run_results_compare(const CompareArgs& a) {
  const ResultSelector base = parse_selector(a.base, "--base"), next = parse_selector(a.next, "--new");
  CompareOptions options;
  options.threshold = parse_threshold(a.threshold);
  options.alpha = a.alpha;
  ResultsDb db(existing_db(a.db));
  const ResultsComparison c = compare_results(db, filter_of(a.filter), base, next, options);
  if (c.cells.empty())
    throw Error(ErrorKind::Usage,
                fmt::format("no cell has a result on both sides ({} and {}): check the names with `modelstat results`",
                            base.text(), next.text()),
                db.path());
  write_output(a.output, [&](std::ostream& out, bool) { report::write_results_comparison(c, a.format, out); });
  if (!c.gate_failed()) return 0;
  std::fprintf(stderr, "modelstat: %s\n", report::results_gate_summary(c).c_str());
  return 1;
}

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kResultsHelp =
    "What a results database holds (one row per cell and machine, the latest run unless --all-runs), filtered, as a "
    "table, CSV (DLI's columns first), JSON, Markdown or a self-contained HTML page (rows = cells, columns = "
    "machines, charts, trends); `results compare` tests two machines, commits, dates or runs (docs/suites.md)";

const char* const kResultsCompareHelp =
    "Compare two sides of a results database cell by cell with `modelstat compare`'s test (Mann-Whitney U on the raw "
    "samples, bootstrap CI of the median ratio); exit 1 when a cell regressed beyond the threshold";

void add_results_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<ResultsArgs>();
  CLI::App* cmd = app.add_subcommand("results", kResultsHelp);
  cmd->add_option("db", args->db, "Results database (default " + default_results_db() + ")");
  add_filter_flags(*cmd, args->filter);
  cmd->add_flag("--all-runs", args->filter.all_runs, "Every run's result, not only the latest per cell and machine");
  cmd->add_option("-f,--format", args->output.format, "Output format: table, csv, json, md or html")
      ->check(CLI::IsMember({"table", "csv", "json", "md", "html"}))
      ->default_val("table");
  cmd->add_option("-o,--output", args->output.output, "Write to FILE instead of standard output");
  cmd->add_option("--limit", args->limit, "At most N rows (paging; 0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--offset", args->offset, "Skip the first N rows (paging)")->check(CLI::NonNegativeNumber);
  auto cmp = std::make_shared<CompareArgs>();
  CLI::App* c = cmd->add_subcommand("compare", kResultsCompareHelp);
  c->footer(
      "Sides: machine=NAME (cells paired by cell), commit=PREFIX, date=YYYY-MM-DD or run=ID (cells paired by cell and\n"
      "machine); each side takes the latest result of each cell. The test and the verdicts: `modelstat compare --help`.\n"
      "Example: modelstat results compare results.db --base machine=ci-old --new machine=ci-new --threshold 5%");
  c->add_option("db", cmp->db, "Results database (default " + default_results_db() + ")");
  c->add_option("--base", cmp->base, "The baseline side: machine=NAME, commit=PREFIX, date=YYYY-MM-DD or run=ID")
      ->required();
  c->add_option("--new", cmp->next, "The side compared against it, of the same kind")->required();
  c->add_option("--threshold", cmp->threshold, "Relative change of the median that counts: 10% or 0.10 (default 10%)")
      ->default_str("10%");
  c->add_option("--alpha", cmp->alpha, "Significance level; the ratio CI has confidence 1 - alpha")
      ->default_val(0.05)
      ->check(CLI::Range(1e-9, 0.5));
  add_filter_flags(*c, cmp->filter);
  c->add_option("-f,--format", cmp->format, "Output format: table, json or md")
      ->check(CLI::IsMember({"table", "json", "md"}))
      ->default_val("table");
  c->add_option("-o,--output", cmp->output, "Write to FILE instead of standard output");
  // `results compare` before `results`: main runs the first command whose subcommand was parsed.
  commands.push_back({c, [cmp] { return run_results_compare(*cmp); }, {}});
  commands.push_back({cmd, [args] { return run_results(*args); }, {}});
}

}  // namespace modelstat::cli
