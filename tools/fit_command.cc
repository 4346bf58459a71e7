// `modelstat fit`: memory and latency forecast for inference or one training
// step, against budgets (docs/FIT.md). Pure arithmetic on the static analysis
// and the device ceilings: no LibTorch, nothing is run.
#include <cstdlib>

#include "modelstat/ceilings.hpp"
#include "modelstat/fit.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

namespace {

struct FitArgs {
  ModelArgs model;
  int64_t batch = 0;  // 0: --default-batch
  std::string memory, latency;
  bool train = false;
  std::string optimizer = "adam";
  std::string ceilings_file, datasheet;
  std::string device = "cpu";
  std::string dtype = "fp32";
  std::string format = "table";
  std::string output;
};

DeviceCeilings resolve_ceilings(const FitArgs& a) {
  if (auto c = explicit_ceilings(a.ceilings_file, a.datasheet)) return *c;
  const std::string path = default_ceilings_path(a.device);
  auto c = load_ceilings(path);
  if (!c)
    throw Error(ErrorKind::Usage, "no saved " + a.device + " ceilings at " + path + ": run 'modelstat device" +
                                      (a.device == "cuda" ? " --device cuda" : "") +
                                      "' first, or pass --ceilings FILE or --datasheet NAME");
  return *c;
}

int run_fit(const FitArgs& a) {
  FitOptions options;
  options.train = a.train;
  options.optimizer = parse_optimizer(a.optimizer);
  options.compute_dtype = a.dtype;
  if (!a.memory.empty()) options.memory_budget_bytes = parse_byte_size(a.memory);
  if (!a.latency.empty()) options.latency_budget_seconds = parse_duration_seconds(a.latency);
  const LoadOptions base = a.model.load_options();
  const int64_t batch = a.batch > 0 ? a.batch : base.default_batch;
  const DeviceCeilings ceilings = resolve_ceilings(a);
  if (!a.ceilings_file.empty() || !a.datasheet.empty())
    if (ceilings.device_kind != a.device && a.device != "cpu")
      throw_usage("--device " + a.device + " but the ceilings are for " + ceilings.device_kind);
  const auto writer = make_fit_writer(a.format);

  const AnalyzeAtBatch analyze = [&](int64_t b) {
    LoadOptions o = base;
    o.default_batch = b;
    return analyze_file(a.model.model, o);
  };
  const FitReport report = fit_model(analyze, batch, ceilings, options);
  write_output(a.output, [&](std::ostream& out, bool) { writer->write(report, out); });
  return report.within_budgets() ? 0 : kFitBudgetExceededExitCode;
}

}  // namespace

void add_fit_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "Forecast memory (weights, activations, workspace; gradients and optimizer state with --train) and latency "
      "from the static analysis and the device's ceilings, and check them against budgets. Exit 3 when a budget "
      "given is predicted to be exceeded. Rules: docs/FIT.md");
  add_model_flags(*cmd, args->model);
  cmd->add_option("--batch", args->batch, "Batch size: binds the leading dim of the inputs (as --default-batch)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory", args->memory, "Memory budget, e.g. 8GiB, 512MiB, 2GB (B, KiB..TiB, KB..TB)");
  cmd->add_option("--latency-budget", args->latency, "Latency budget per batch (per training step with --train), "
                                                     "e.g. 10ms, 0.5s, 250us");
  cmd->add_flag("--train", args->train, "Forecast one training step instead of inference");
  cmd->add_option("--optimizer", args->optimizer, "Optimizer of the training step: sgd, momentum or adam")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->default_val("adam");
  auto* file = cmd->add_option("--ceilings", args->ceilings_file,
                               "Device ceilings JSON (from 'modelstat device'); default: the saved one for --device");
  cmd->add_option("--datasheet", args->datasheet, "Use labelled datasheet ceilings instead (h100-sxm, a100-sxm, ...)")
      ->excludes(file);
  cmd->add_option("--device", args->device, "Which saved ceilings to use: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->default_val("cpu");
  cmd->add_option("--dtype", args->dtype, "Matmul curve the contractions are priced on: fp32, tf32, fp16, bf16")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}))
      ->default_val("fp32");
  cmd->add_option("-f,--format", args->format, "Output format: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_val("table");
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of standard output");
  commands.push_back({cmd, [args]() -> int { return run_fit(*args); }});
}

}  // namespace modelstat::cli
