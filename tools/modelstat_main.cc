// The modelstat command line. Only this file catches errors and maps them to
// exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <new>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "modelstat/grouping.hpp"
#include "tools/cli_common.hpp"
#include "tools/writers/writers.hpp"

using modelstat::cli::add_model_flags;
using modelstat::cli::add_output_flags;
using modelstat::cli::ModelArgs;
using modelstat::cli::OutputArgs;

namespace {

const char* const kVersion = "0.1.0";

void write_report(const modelstat::AnalysisResult& result, const OutputArgs& o) {
  auto writer = modelstat::make_analysis_writer(o.format);
  modelstat::ReportOptions ro;
  ro.top = o.top;
  ro.show_all_nodes = !o.no_nodes;
  modelstat::cli::write_output(o.output, [&](std::ostream& out, bool is_tty) {
    ro.color = o.format == "table" && is_tty && std::getenv("NO_COLOR") == nullptr;
    writer->write(result, ro, out);
  });
}

int list_ops() {
  const auto& rules = modelstat::cost::all_rules();
  std::cout << fmt::format("{} cost rules (domain '' is ai.onnx). Convention: {}\n\n", rules.size(),
                           modelstat::kCostConvention);
  for (const auto& r : rules) {
    std::string range = "opset " + std::to_string(r.key.since_version) + "+";
    if (r.key.until_version != std::numeric_limits<int64_t>::max())
      range = "opset " + std::to_string(r.key.since_version) + "-" + std::to_string(r.key.until_version);
    std::cout << fmt::format("{:<28} {:<12} {}\n",
                             (r.key.domain.empty() ? "" : r.key.domain + "::") + r.key.op_type, range, r.doc);
  }
  return 0;
}

// `modelstat model.onnx ...` is `modelstat analyze model.onnx ...`.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const char* const subcommands[] = {"analyze", "ops", "profile", "verify", "report", "device", "fit", "compare", "pipeline"};
  if (!args.empty() && args[0][0] != '-') {
    bool known = false;
    for (const char* s : subcommands) known = known || args[0] == s;
    if (!known) args.insert(args.begin(), "analyze");
  }
  return args;
}


// `modelstat profile|verify|report|device ARGS` runs `modelstat-profiler ... ARGS`
// from the same folder, so that analysis never loads LibTorch.
void forward_to_profiler(int argc, char** argv) {
  if (argc < 2) return;
  const std::string sub = argv[1];
  if (!modelstat::cli::is_profiler_subcommand(sub)) return;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  std::string path(self);
  path = path.substr(0, path.rfind('/') + 1) + "modelstat-profiler";
  if (access(path.c_str(), X_OK) != 0) return;  // not built: the stub subcommand explains
  std::vector<char*> args(argv, argv + argc);
  args[0] = const_cast<char*>(path.c_str());
  args.push_back(nullptr);
  execv(path.c_str(), args.data());
  std::fprintf(stderr, "modelstat: error: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  forward_to_profiler(argc, argv);
  CLI::App app{
      "modelstat: what a neural network costs and where its time goes.\n"
      "  modelstat model.onnx            per-layer params, MACs, FLOPs, bytes and memory (same as 'analyze')\n"
      "  modelstat ops                   the documented cost rule of every supported op\n"
      "  modelstat profile model.onnx    measured whole-model and per-layer latency (LibTorch, CPU or CUDA)\n"
      "  modelstat verify CASE_DIR       run an ONNX test case and compare with its expected outputs\n"
      "  modelstat report model.onnx     FLOPs vs measured latency per layer on the device's roofline (html, trace, ...)\n"
      "  modelstat device                measure and save this device's ceilings (bandwidth, matmul FLOP/s)\n"
      "  modelstat pipeline PIPE.json    several models and host work in one path, each stage timed without stalling it\n"
      "  modelstat fit model.onnx        memory and latency forecast for inference or training, against budgets\n"
      "  modelstat compare a.json b.json per-node and total deltas with significance; exit 1 on a regression\n"
      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input."};
  app.name("modelstat");
  app.set_version_flag("--version", std::string("modelstat ") + kVersion);
  app.require_subcommand(0, 1);

  ModelArgs model_args;
  OutputArgs output_args;
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Static analysis: per-node and total params, MACs, FLOPs, bytes, model size by dtype and peak activation "
      "memory. Reads dims only, never weight values.");
  add_model_flags(*analyze, model_args);
  modelstat::cli::DecoderArgs decoder_args;
  modelstat::cli::add_decoder_flags(*analyze, decoder_args);
  add_output_flags(*analyze, output_args);
  CLI::App* ops = app.add_subcommand("ops", "List every op with a cost rule and its formula");
  std::vector<modelstat::cli::Command> commands;
  modelstat::cli::add_profiler_commands(app, commands);
  modelstat::cli::add_fit_command(app, commands);
  modelstat::cli::add_compare_command(app, commands);

  try {
    std::vector<std::string> args = with_default_subcommand(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  return modelstat::cli::run_mapping_errors([&]() -> int {
    if (*ops) return list_ops();
    for (const auto& c : commands)
      if (*c.app) return c.run();
    if (*analyze) {
      const std::optional<modelstat::GroupRule> group_rule = output_args.group_rule();
      modelstat::AnalysisResult result =
          decoder_args.context > 0
              ? modelstat::analyze_decoder(model_args.model, model_args.load_options(), decoder_args.context,
                                           decoder_args.prompt_or_context())
              : modelstat::analyze_file(model_args.model, model_args.load_options());
      if (group_rule) modelstat::apply_grouping(result, *group_rule);
      write_report(result, output_args);
      // Done: leave without tearing down a model of maybe 100k nodes node by
      // node (a fifth of the run time on such graphs); the OS reclaims it.
      std::fflush(nullptr);
      std::_Exit(0);
    }
    std::cout << app.help();
    return 2;
  });
}
