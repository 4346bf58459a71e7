// The modelstat command line. Only this file catches errors and maps them to
// exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <new>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "modelstat/report.hpp"

namespace {

const char* const kVersion = "0.1.0";

struct ModelArgs {
  std::string model;
  std::vector<std::string> inputs, dims;
  int64_t default_batch = 1;
  bool allow_custom_domains = false;

  modelstat::LoadOptions load_options() const {
    modelstat::LoadOptions o;
    for (const auto& s : inputs) modelstat::parse_input_spec(s, o);
    for (const auto& s : dims) modelstat::parse_dim_spec(s, o);
    if (default_batch < 1) modelstat::throw_usage("--default-batch must be at least 1");
    o.default_batch = default_batch;
    o.allow_custom_domains = allow_custom_domains;
    return o;
  }
};

struct OutputArgs {
  std::string format = "table";
  std::string output;
  int top = 10;
  bool no_nodes = false;
};

void add_model_flags(CLI::App& cmd, ModelArgs& m) {
  cmd.add_option("model", m.model, "ONNX model file (.onnx); external weights may be absent")->required();
  cmd.add_option("--input", m.inputs,
                 "Shape of a graph input, NAME:DIMS, e.g. --input pixel_values:8x3x224x224 (repeatable)");
  cmd.add_option("--dim", m.dims, "Value of a symbolic dim, NAME=VALUE, e.g. --dim batch=8 --dim seq=128 (repeatable)");
  cmd.add_option("--default-batch", m.default_batch, "Value for an unbound leading (batch) dim")
      ->default_val(1);
  cmd.add_flag("--allow-custom-domains", m.allow_custom_domains,
               "Accept custom op domains; their nodes are listed as unknown instead of refused");
}

void add_output_flags(CLI::App& cmd, OutputArgs& o) {
  cmd.add_option("-f,--format", o.format, "Output format: table, json, csv or md")
      ->check(CLI::IsMember({"table", "json", "csv", "md"}))
      ->default_val("table");
  cmd.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output");
  cmd.add_option("--top", o.top, "Number of hotspots (nodes with most FLOPs) to list; 0 for none")
      ->default_val(10)
      ->check(CLI::Range(0, 1000000));
  cmd.add_flag("--no-nodes", o.no_nodes, "Leave the per-layer rows out of table and Markdown output");
}

void write_report(const modelstat::AnalysisResult& result, const OutputArgs& o) {
  auto writer = modelstat::make_analysis_writer(o.format);
  modelstat::ReportOptions ro;
  ro.top = o.top;
  ro.show_all_nodes = !o.no_nodes;
  if (o.output.empty() || o.output == "-") {
    ro.color = o.format == "table" && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    writer->write(result, ro, std::cout);
    std::cout.flush();
    if (!std::cout) throw modelstat::Error(modelstat::ErrorKind::Runtime, "cannot write to standard output");
    return;
  }
  std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
  if (!file) throw modelstat::Error(modelstat::ErrorKind::Usage, "cannot open output file '" + o.output + "'");
  writer->write(result, ro, file);
  file.close();
  if (!file) throw modelstat::Error(modelstat::ErrorKind::Runtime, "failed writing '" + o.output + "'");
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
  static const char* const subcommands[] = {"analyze", "ops"};
  if (!args.empty() && args[0][0] != '-') {
    bool known = false;
    for (const char* s : subcommands) known = known || args[0] == s;
    if (!known) args.insert(args.begin(), "analyze");
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "modelstat: what a neural network costs and where its time goes.\n"
      "  modelstat model.onnx            per-layer params, MACs, FLOPs, bytes and memory (same as 'analyze')\n"
      "  modelstat ops                   the documented cost rule of every supported op\n"
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
  add_output_flags(*analyze, output_args);
  CLI::App* ops = app.add_subcommand("ops", "List every op with a cost rule and its formula");

  try {
    std::vector<std::string> args = with_default_subcommand(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*ops) return list_ops();
    if (*analyze) {
      const modelstat::AnalysisResult result =
          modelstat::analyze_file(model_args.model, model_args.load_options());
      write_report(result, output_args);
      return 0;
    }
    std::cout << app.help();
    return 2;
  } catch (const modelstat::Error& e) {
    std::fprintf(stderr, "modelstat: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "modelstat: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "modelstat: internal error: %s\n", e.what());
    return 1;
  }
}
