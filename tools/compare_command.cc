// `modelstat compare BASE.json NEW.json`: per-node and whole-model deltas of two
// profile runs with a significance test, and an exit code a CI pipeline can gate on.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "modelstat/compare.hpp"
#include "tools/cli_common.hpp"
#include "tools/suite_commands.hpp"
#include "tools/writers/compare_writers.hpp"

namespace modelstat::cli {

// "5%" -> 0.05, "0.05" -> 0.05. A bare number must be a fraction below 1: "5" is
// ambiguous (5% or 500%?), so it is refused rather than guessed.
double parse_threshold(const std::string& text) {
  std::string number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v < 0)
    throw_usage("--threshold: expected a percentage like 5% or a fraction like 0.05, got '" + text + "'");
  if (percent) return v / 100.0;
  if (v >= 1.0)
    throw_usage("--threshold " + text + " is ambiguous: write " + text +
                "% for a percentage, or a fraction below 1");
  return v;
}

namespace {

const char* const kCompareHelp =
    "Compares the raw samples of two profile runs (JSON from 'modelstat profile -f json', or from "
    "'modelstat report -f json', which nests the profile), for the whole model and node by node "
    "(matched by name; by position, with a notice, when the names do not identify the nodes).";

const char* const kCompareFooter =
    "The test, for the whole model and for each node:\n"
    "  delta        median(new) / median(base) - 1\n"
    "  p-value      two-sided Mann-Whitney U test on the raw samples (exact for small samples\n"
    "               without ties, else the normal approximation with tie correction)\n"
    "  ratio CI     bootstrap confidence interval (1 - alpha) of median(new) / median(base),\n"
    "               2000 resamples with a fixed seed: the same files give the same answer\n"
    "  regression   delta > threshold AND p < alpha AND the ratio CI entirely above 1\n"
    "  improvement  delta < -threshold AND p < alpha AND the ratio CI entirely below 1\n"
    "Context differences (device, dtype, threads, batch, model FLOPs) are printed as warnings first.\n"
    "\n"
    "The gate (exit code): 0 when nothing regressed; 1 when the whole model regressed or, with\n"
    "--per-node-gate, a node carrying at least 1% of the per-layer time (in either run) did;\n"
    "2 for bad usage or input (an unreadable file, not a profile or report document, no samples).\n"
    "The test sees the samples, not the machine: a machine that is busier during one run than the\n"
    "other slows it as a code change would. Profile both runs back to back on a quiet machine; the\n"
    "warnings flag runs whose speed drifted or varied a lot. The default threshold, 10% (asv's 1.1), is\n"
    "above the 2-6% seen between back-to-back runs of one model on a 2-vCPU VM (bench/compare/README.md).\n"
    "\n"
    "Example: modelstat compare main.json branch.json --threshold 5% -f md -o comment.md";

struct CompareArgs {
  std::string base, next;
  std::string threshold = "10%";
  double alpha = 0.05;
  bool per_node_gate = false;
  OutputArgs output;
};

Comparison compute_comparison(const CompareArgs& a) {
  CompareOptions options;
  options.threshold = parse_threshold(a.threshold);
  options.alpha = a.alpha;
  options.per_node_gate = a.per_node_gate;
  const RunSamples base = load_run_samples(a.base);
  const RunSamples next = load_run_samples(a.next);
  return compare_runs(base, next, options);
}

int run_compare(const CompareArgs& a) {
  const Comparison comparison = compute_comparison(a);
  auto writer = make_compare_writer(a.output.format);
  ReportOptions ro;
  ro.top = a.output.top;
  write_output(a.output.output, [&](std::ostream& out, bool is_tty) {
    ro.color = a.output.format == "table" && is_tty && std::getenv("NO_COLOR") == nullptr;
    writer->write(comparison, ro, out);
  });
  if (!comparison.gate_failed()) return 0;
  // The report may have gone to a file or be JSON on stdout: say why the exit code is 1 on stderr.
  std::fprintf(stderr, "modelstat: %s\n", report::gate_summary(comparison).c_str());
  return 1;
}

Rendered render_compare(const CompareArgs& a) {
  const Comparison comparison = compute_comparison(a);
  ReportOptions ro;
  ro.top = a.output.top;
  std::ostringstream json, table;
  make_compare_writer("json")->write(comparison, ro, json);
  make_compare_writer("table")->write(comparison, ro, table);
  return {json.str(), table.str(), comparison.gate_failed() ? 1 : 0};
}

}  // namespace

void add_compare_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", kCompareHelp);
  cmd->footer(kCompareFooter);
  cmd->add_option("base", args->base, "Baseline profile or report JSON")->required();
  cmd->add_option("new", args->next, "New profile or report JSON, compared against the baseline")->required();
  cmd->add_option("--threshold", args->threshold,
                  "Relative change of the median that counts: 10% or 0.10 (default 10%)")
      ->default_str("10%");
  cmd->add_option("--alpha", args->alpha,
                  "Significance level of the test; the ratio CI has confidence 1 - alpha")
      ->default_val(0.05)
      ->check(CLI::Range(1e-9, 0.5));
  cmd->add_flag("--per-node-gate", args->per_node_gate,
                "Also exit 1 when a node carrying at least 1% of the per-layer time regressed");
  cmd->add_option("-f,--format", args->output.format, "Output format: table, json or md")
      ->check(CLI::IsMember({"table", "json", "md"}))
      ->default_val("table");
  cmd->add_option("-o,--output", args->output.output,
                  "Write the comparison to FILE instead of standard output");
  cmd->add_option("--top", args->output.top,
                  "Node rows in table and Markdown output, regressions first; 0 for none (JSON lists all)")
      ->default_val(10)
      ->check(CLI::Range(0, 1000000));
  commands.push_back({cmd, [args]() { return run_compare(*args); }, [args] { return render_compare(*args); }});
}

}  // namespace modelstat::cli
