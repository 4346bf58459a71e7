// `modelstat fit`: memory and latency forecast for inference or one training
// step, against budgets (docs/FIT.md). Pure arithmetic on the static analysis
// and the device ceilings: no LibTorch, nothing is run.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "modelstat/ceilings.hpp"
#include "modelstat/fit.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

namespace {

// Budgets as typed: a number and a unit, turned into bytes and seconds here,
// in the command line (the forecast API takes numbers). Not CLI11's
// AsSizeValue / AsNumberWithUnit (2.1.2 here): they take letters-only units
// (no "µs"), accept exponents, negative numbers and any letter case, and print
// a double result back with six significant digits (8GiB would become
// 8.58993e+09), so the two flags transform with their own unit tables.

// Splits "12.5 ms" into 12.5 and "ms"; nullopt when there is no plain decimal number.
std::optional<std::pair<double, std::string>> split_number_unit(const std::string& text) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = begin;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == begin) return std::nullopt;
  const std::string number = text.substr(begin, end - begin);
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
  std::string unit = text.substr(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(unit.begin());
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  return std::make_pair(std::stod(number), unit);
}

// A CLI11 transform: the number times its unit's factor, or a ValidationError
// saying what was expected (`hint`). `integral`: rounded to a whole number.
CLI::Validator number_with_unit(const std::map<std::string, double>& units, const std::string& what,
                                const std::string& examples, bool integral) {
  auto transform = [units, what, examples, integral](std::string& text) -> std::string {
    const std::string hint = "'" + text + "' is not " + what + " (e.g. " + examples + ")";
    const auto parsed = split_number_unit(text);
    if (!parsed) throw CLI::ValidationError(hint);
    const auto unit = units.find(parsed->second);
    if (unit == units.end()) throw CLI::ValidationError(hint);
    const double value = parsed->first * unit->second;
    if (!std::isfinite(value) || (integral && value >= 9.2e18)) throw CLI::ValidationError(hint + ": too large");
    text = integral ? std::to_string(std::llround(value)) : fmt::format("{:.17g}", value);
    return {};
  };
  return CLI::Validator(transform, "", what);
}

// "8GiB", "512 MiB", "1.5GB", "4096", "4096B": B, KiB/MiB/GiB/TiB (powers of
// 1024), KB/MB/GB/TB (powers of 1000); a bare number is bytes.
CLI::Validator byte_size() {
  return number_with_unit({{"", 1},
                           {"B", 1},
                           {"KiB", 1024.0},
                           {"MiB", 1024.0 * 1024},
                           {"GiB", 1024.0 * 1024 * 1024},
                           {"TiB", 1024.0 * 1024 * 1024 * 1024},
                           {"KB", 1e3},
                           {"kB", 1e3},
                           {"MB", 1e6},
                           {"GB", 1e9},
                           {"TB", 1e12}},
                          "a memory size", "8GiB, 512MiB, 1.5GB, 4096B", /*integral=*/true);
}

}  // namespace

// "10ms", "0.5s", "250us" (also "µs"), "40ns": a unit is required.
CLI::Validator duration_seconds() {
  return number_with_unit({{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}}, "a duration",
                          "10ms, 0.5s, 250us", /*integral=*/false);
}

namespace {

// A duration with an optional "/token" suffix (fit --context's per-token
// budget), which it strips and records in `per_token`.
CLI::Validator duration_or_per_token(bool& per_token) {
  const CLI::Validator duration = duration_seconds();
  return CLI::Validator(
      [&per_token, duration](std::string& text) -> std::string {
        const std::string suffix = "/token";
        if (text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
          text.erase(text.size() - suffix.size());
          per_token = true;
        }
        return duration(text);
      },
      "", "a duration");
}

struct FitArgs {
  ModelArgs model;
  int64_t batch = 0;  // 0: --default-batch
  std::optional<int64_t> memory_bytes;
  std::optional<double> latency_seconds;
  bool per_token = false;  // --latency-budget D/token
  DecoderArgs decoder;
  bool train = false;
  std::string optimizer = "adam";
  std::string precision = "fp32";
  std::string checkpointing = "none";
  int64_t shards = 1;
  int zero_stage = -1;
  std::string ceilings_file, datasheet;
  std::string device = "cpu";
  std::string dtype = "fp32";
  std::string format = "table";
  std::string output;
};

// The ceilings named, else the saved ones of --device, else quick ones
// measured now (with a notice), as `report` does.
DeviceCeilings resolve_ceilings(const FitArgs& a, const QuickCeilings& quick, std::vector<std::string>& notices) {
  if (auto c = explicit_ceilings(a.ceilings_file, a.datasheet)) return *c;
  const std::string path = default_ceilings_path(a.device);
  if (auto c = load_ceilings(path)) return *c;
  if (!quick)
    throw Error(ErrorKind::Usage, "no saved " + a.device + " ceilings at " + path + ": run 'modelstat device" +
                                      (a.device == "cuda" ? " --device cuda" : "") +
                                      "' first, or pass --ceilings FILE or --datasheet NAME");
  DeviceCeilings c = quick(a.device);
  notices.push_back(quick_ceilings_notice(no_saved_ceilings(path), "this forecast"));
  return c;
}

// fit --context: prefill and one decode step of a decoder, each priced as
// any graph is, on the dims decoder_bindings() binds; the report's rows are
// the decode step's (docs/FIT.md, "Decoders").
FitReport fit_decoder(const FitArgs& a, const LoadOptions& base, int64_t batch, const DeviceCeilings& ceilings,
                      FitOptions options) {
  const DecoderBindings b = decoder_bindings(a.model.model, base, a.decoder.context, a.decoder.prompt_or_context());
  auto analyze_with = [&](const std::map<std::string, int64_t>& dims) {
    LoadOptions o = base;
    o.default_batch = batch;
    for (const auto& [k, v] : dims) o.dim_values[k] = v;
    return analyze_file(a.model.model, o);
  };
  const std::optional<double> batch_budget = a.per_token ? std::nullopt : options.latency_budget_seconds;
  options.latency_budget_seconds = batch_budget;
  const AnalysisResult prefill = analyze_with(b.prefill);
  const AnalysisResult decode = analyze_with(b.decode);
  FitReport prefill_report = forecast_fit(prefill, ceilings, options);
  FitReport report = forecast_fit(decode, ceilings, options);
  report.batch = batch;
  DecoderForecast d;
  d.context = b.context;
  d.prompt = b.prompt;
  d.batch = batch;
  d.bindings = b.describe();
  d.prefill_seconds = prefill_report.latency.total_seconds;
  d.decode_seconds = report.latency.total_seconds;
  d.tokens_per_second = d.decode_seconds > 0 ? double(batch) / d.decode_seconds : 0;
  d.weights_bytes = report.memory.weights_bytes;
  if (decode.kv_cache) {
    d.kv_cache_bytes = std::max<int64_t>(decode.kv_cache->present_bytes, 0);
    d.kv_bytes_per_token = std::max<int64_t>(decode.kv_cache->bytes_per_token, 0);
  }
  d.prefill_memory_bytes = prefill_report.memory.total_bytes;
  d.decode_memory_bytes = report.memory.total_bytes;
  // The batch budget is the prefill's (a whole prompt); a per-token one the decode step's.
  if (batch_budget) report.meets_latency = d.prefill_seconds <= *batch_budget;
  if (a.per_token && a.latency_seconds) {
    d.token_budget_seconds = a.latency_seconds;
    d.meets_token_budget = d.decode_seconds <= *a.latency_seconds;
  }
  if (options.memory_budget_bytes)
    report.fits_memory = std::max(d.prefill_memory_bytes, d.decode_memory_bytes) <= *options.memory_budget_bytes;
  report.batch_search = BatchSearch{};
  report.batch_search.note = "not searched with --context: give --batch";
  report.notices.insert(report.notices.begin(), d.bindings + "; the rows are the decode step");
  report.decoder = d;
  return report;
}

FitReport compute_fit(const FitArgs& a, const QuickCeilings& quick) {
  FitOptions options;
  options.train = a.train;
  options.optimizer = parse_as<Optimizer>(a.optimizer, "--optimizer");
  options.precision = parse_as<TrainPrecision>(a.precision, "--precision");
  options.checkpointing = parse_as<Checkpointing>(a.checkpointing, "--checkpointing");
  options.shards = a.shards;
  options.zero_stage = a.zero_stage;
  options.compute_dtype = a.dtype;
  options.memory_budget_bytes = a.memory_bytes;
  options.latency_budget_seconds = a.latency_seconds;
  const LoadOptions base = a.model.load_options();
  const int64_t batch = a.batch > 0 ? a.batch : base.default_batch;
  // Bad usage fails before any ceilings are measured.
  if (a.per_token && a.decoder.context == 0) throw_usage("--latency-budget D/token needs --context");
  if (a.decoder.context > 0 && a.train)
    throw_usage("--context forecasts inference (prefill and decode): leave out --train");
  // So does a model that cannot be opened: the loader's error names it.
  if (!std::ifstream(a.model.model)) (void)analyze_file(a.model.model, base);
  std::vector<std::string> notices;
  const DeviceCeilings ceilings = resolve_ceilings(a, quick, notices);
  if (!a.ceilings_file.empty() || !a.datasheet.empty())
    if (ceilings.device_kind != a.device && a.device != "cpu")
      throw_usage("--device " + a.device + " but the ceilings are for " + ceilings.device_kind);

  const AnalyzeAtBatch analyze = [&](int64_t b) {
    LoadOptions o = base;
    o.default_batch = b;
    return analyze_file(a.model.model, o);
  };
  FitReport report;
  if (a.decoder.context > 0) {
    report = fit_decoder(a, base, batch, ceilings, options);
  } else {
    report = fit_model(analyze, batch, ceilings, options);
  }
  if (std::string stale = stale_ceilings_notice(ceilings, std::time(nullptr), "this forecast"); !stale.empty())
    notices.push_back(std::move(stale));
  report.notices.insert(report.notices.begin(), notices.begin(), notices.end());
  return report;
}

int run_fit(const FitArgs& a, const QuickCeilings& quick) {
  const auto writer = make_fit_writer(a.format);
  const FitReport report = compute_fit(a, quick);
  write_output(a.output, [&](std::ostream& out, bool) { writer->write(report, out); });
  return report.within_budgets() ? 0 : kFitBudgetExceededExitCode;
}

Rendered render_fit(const FitArgs& a, const QuickCeilings& quick) {
  const FitReport report = compute_fit(a, quick);
  std::ostringstream json, table;
  make_fit_writer("json")->write(report, json);
  make_fit_writer("table")->write(report, table);
  return {json.str(), table.str(), report.within_budgets() ? 0 : kFitBudgetExceededExitCode};
}

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kFitHelp =
    "Forecast memory (weights, activations, workspace; gradients and optimizer state with --train) and latency "
    "from the static analysis and the device's ceilings, and check them against budgets. Exit 3 when a budget "
    "given is predicted to be exceeded. Rules: docs/FIT.md";

void add_fit_command(CLI::App& app, std::vector<Command>& commands, QuickCeilings quick) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand("fit", kFitHelp);
  add_model_flags(*cmd, args->model);
  cmd->add_option("--batch", args->batch, "Batch size: binds the leading dim of the inputs (as --default-batch)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory", args->memory_bytes, "Memory budget, e.g. 8GiB, 512MiB, 2GB (B, KiB..TiB, KB..TB)")
      ->transform(byte_size())
      ->type_name("SIZE");
  cmd->add_option("--latency-budget", args->latency_seconds,
                  "Latency budget per batch (per training step with --train; the prefill with --context), e.g. "
                  "10ms, 0.5s, 250us; with --context, D/token is a budget for one decode step, e.g. 30ms/token")
      ->transform(duration_or_per_token(args->per_token))
      ->type_name("DURATION");
  add_decoder_flags(*cmd, args->decoder);
  CLI::Option* train = cmd->add_flag("--train", args->train, "Forecast one training step instead of inference");
  cmd->add_option("--optimizer", args->optimizer, "Optimizer of the training step: sgd, momentum or adam")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->default_val("adam");
  cmd->add_option("--precision", args->precision,
                  "Training precision: fp32 (default); bf16 or fp16 mixed precision: without --zero-stage as "
                  "torch.autocast runs it (fp32 weights = master weights, fp32 gradients and moments; Conv, Gemm, "
                  "MatMul in 16 bits on cast inputs, weights' casts cached for the step; measured for bf16 by "
                  "'profile --train-step --precision bf16 --memory'), with --zero-stage as ZeRO/DeepSpeed hold it "
                  "(16-bit weights, gradients and activations; fp32 master weights + moments = 12 bytes per "
                  "parameter with Adam)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->default_val("fp32")
      ->needs(train);
  cmd->add_option("--checkpointing", args->checkpointing,
                  "Activation checkpointing: none (default: autograd keeps what it saves); selective (Korthikanti et "
                  "al. 2022: the attention scores, from a MatMul of two activations through Softmax/Dropout to the "
                  "next such MatMul, recomputed in backward); full (only each block's input kept, a block being a "
                  "node-name path component ending in an index such as /layer.3/; recomputed one block at a time). "
                  "Formula-based (not measured)")
      ->check(CLI::IsMember({"none", "selective", "full"}))
      ->default_val("none")
      ->needs(train);
  CLI::Option* zero = cmd->add_option(
      "--zero-stage", args->zero_stage,
      "ZeRO (Rajbhandari et al. 2020) over --shards N data-parallel processes: 1 divides the optimizer state "
      "(fp32 master weights and moments) by N, 2 also the gradients, 3 also the weights (plus the largest weight "
      "gathered); 0 = ZeRO's layout, nothing divided. Figures per process, formula-based (not measured), with "
      "DeepSpeed's own estimate beside them for stages 2 and 3");
  zero->check(CLI::Range(0, 3))->needs(train)->type_name("0|1|2|3");
  cmd->add_option("--shards", args->shards,
                  "Data-parallel processes the --zero-stage divides the model states over (default 1)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40))
      ->needs(zero)
      ->type_name("N");
  auto* file = cmd->add_option("--ceilings", args->ceilings_file,
                               "Device ceilings JSON (from 'modelstat device'); default: the saved one for --device, else quick "
                               "ones measured now (a few seconds, with a notice)");
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
  commands.push_back({cmd, [args, quick]() -> int { return run_fit(*args, quick); },
                      [args, quick] { return render_fit(*args, quick); }});
}

}  // namespace modelstat::cli
