// `modelstat analyze model.onnx` (also `modelstat model.onnx`): the static
// analysis, written in one format. Shared by the binary and the Python module.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "analyzer/stage_timer.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/grouping.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

namespace {

struct AnalyzeArgs {
  ModelArgs model;
  DecoderArgs decoder;
  OutputArgs output;

  ReportOptions report_options() const {
    ReportOptions ro;
    ro.top = output.top;
    ro.show_all_nodes = !output.no_nodes;
    return ro;
  }

  // exit_fast: the process exits after this one analysis (LoadOptions::prefault_heap).
  AnalysisResult compute(bool exit_fast = false) const {
    const std::optional<GroupRule> group_rule = output.group_rule();
    LoadOptions options = model.load_options();
    options.prefault_heap = exit_fast && decoder.context <= 0;  // one load
    AnalysisResult result =
        decoder.context > 0
            ? analyze_decoder(model.model, options, decoder.context, decoder.prompt_or_context())
            : analyze_file(model.model, options);
    if (group_rule) apply_grouping(result, *group_rule);
    return result;
  }
};

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kAnalyzeHelp =
    "Static analysis: per-node and total params, MACs, FLOPs, bytes, model size by dtype and peak activation "
    "memory. Reads dims only, never weight values.";

void add_analyze_command(CLI::App& app, std::vector<Command>& commands, bool exit_fast) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* analyze = app.add_subcommand("analyze", kAnalyzeHelp);
  add_model_flags(*analyze, args->model);
  add_decoder_flags(*analyze, args->decoder);
  add_output_flags(*analyze, args->output);
  auto run = [args, exit_fast]() -> int {
    // A bad format name fails before the model is read.
    const std::unique_ptr<AnalysisWriter> writer = make_analysis_writer(args->output.format);
    if (exit_fast) {
      // A process that analyses one model and leaves: blocks up to 32 MiB
      // (the IR's and the rows' vectors of a 100k-node graph) come from the
      // heap, where the parsed model's freed memory is, instead of fresh
      // mappings, and the heap is never given back in between. Each first
      // touch of a fresh page is a fault (~2 us on a VM): 3,000-5,000 fewer
      // on a 100k-node graph. Not in the Python module: its process lives on.
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    const AnalysisResult result = args->compute(exit_fast);
    ReportOptions ro = args->report_options();
    StageTimer timer;
    write_output(args->output.output, [&](std::ostream& out, bool is_tty) {
      ro.color = args->output.format == "table" && is_tty && std::getenv("NO_COLOR") == nullptr;
      writer->write(result, ro, out);
    });
    timer.lap("write");
    if (exit_fast) {
      // Done: leave without tearing down a model of maybe 100k nodes node by
      // node (a fifth of the run time on such graphs); the OS reclaims it.
      std::fflush(nullptr);
      std::_Exit(0);
    }
    return 0;
  };
  auto render = [args]() -> Rendered {
    const AnalysisResult result = args->compute();
    const ReportOptions ro = args->report_options();
    std::ostringstream json, table;
    make_analysis_writer("json")->write(result, ro, json);
    make_analysis_writer("table")->write(result, ro, table);
    return {json.str(), table.str(), 0};
  };
  commands.push_back({analyze, run, render});
}

}  // namespace modelstat::cli
