// `modelstat pipeline PIPE.json | a.onnx b.onnx ...` (issue 15): several
// models and host work in one path, each stage timed without stalling it;
// docs/pipeline.md. Runs in modelstat-profiler (LibTorch).
#include <map>
#include <memory>

#include "modelstat/pipeline.hpp"
#include "tools/cli_common.hpp"
#include "tools/profile_flags.hpp"
#include "tools/writers/pipeline_writers.hpp"

namespace modelstat::cli {

namespace {

const std::vector<std::string> kPipelineFormats = {"table", "json", "csv", "md", "html", "trace"};

struct PipelineArgs {
  std::vector<std::string> sources;  // one .json description, or the models of a chain
  ModelArgs bindings;                // --dim / --input / --default-batch for a chain
  std::string format = "table", output;
  std::map<std::string, std::string> extra_outputs;  // --json F, --html F, ...
  PipelineOptions options;
  double host_busy_ms = 0;
};

bool is_description(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kPipelineHelp =
    "Several models and host work in one application path, each stage timed without stalling the path "
    "(seed 001): PIPE.json lists the stages (docs/pipeline.md), or a.onnx b.onnx ... chains models, each "
    "feeding the next by position. Per-stage times from events between stages (CUDA) or the host clock (CPU), "
    "one wait per iteration; end to end with the warm-up and stopping rule of `profile`, the sum of the stages "
    "beside it.";

void add_pipeline_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<PipelineArgs>();
  CLI::App* cmd = app.add_subcommand("pipeline", kPipelineHelp);
  cmd->add_option("sources", args->sources, "PIPE.json, or two or more ONNX models to chain")->required();
  PipelineArgs& a = *args;
  cmd->add_option("--dim", a.bindings.dims, "Chain: a symbolic dim's value in every model, NAME=VALUE (repeatable)");
  cmd->add_option("--input", a.bindings.inputs, "Chain: shape of the model input of that name, NAME:DIMS (repeatable)");
  cmd->add_option("--default-batch", a.bindings.default_batch, "Value for an unbound leading (batch) dim")->default_val(1);
  cmd->add_option("--host-busy-ms", a.host_busy_ms,
                  "Chain: a host stage between consecutive models that keeps the host busy this many milliseconds "
                  "(spinning, as a NumPy step would)")
      ->check(CLI::Range(0.0, 3.6e6));
  add_measurement_flags(*cmd, a.options.measure);
  cmd->add_flag("--timer-comparison", a.options.timer_comparison,
                "Also time the path with a host timer and no sync (the enqueue only), and with a sync after every "
                "stage, and print them beside the events (seed 001's table)");
  cmd->add_option("--in-flight", a.options.in_flight,
                  "Keep N frames in the path at once (a worker thread per stage on the CPU; a CUDA stream per frame): "
                  "throughput, per-frame latency, the bottleneck stage")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--stage-threads", a.options.stage_threads,
                  "Intra-op threads per stage worker with --in-flight (default: the threads split between the "
                  "stages that can run at once, min(N, stages); with N = 1 every thread)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--layers", a.options.layers,
                "Each model stage's per-layer profile, measured on its own after the path (never inside it)");
  cmd->add_option("--timeline-iterations", a.options.timeline_iterations,
                  "Iterations (frames) drawn in the HTML and trace timelines")
      ->default_val(4)
      ->check(CLI::Range(1, 1000));
  cmd->add_option("-f,--format", a.format, "Output format: table, json, csv, md, html or trace")
      ->check(CLI::IsMember(kPipelineFormats))
      ->default_val("table");
  cmd->add_option("-o,--output", a.output, "Write the report to FILE instead of standard output");
  for (const std::string& f : kPipelineFormats)
    if (f != "table")
      cmd->add_option("--" + f, a.extra_outputs[f], "Also write the " + f + " report to FILE (same run)");

  commands.push_back({cmd, [args, cmd] {
                        PipelineArgs& a = *args;
                        if (a.options.measure.max_iterations < a.options.measure.min_iterations)
                          throw_usage("--max-iters is below --iters");
                        std::vector<std::string> notices;
                        lower_min_time_to_max_time(cmd, a.options.measure, notices);
                        PipelineSpec spec;
                        if (a.sources.size() == 1 && is_description(a.sources[0])) {
                          if (!a.bindings.dims.empty() || !a.bindings.inputs.empty() || a.host_busy_ms > 0)
                            throw_usage("--dim, --input and --host-busy-ms are for a chain of models; a description "
                                        "gives each stage its bindings (docs/pipeline.md)");
                          spec = read_pipeline_file(a.sources[0]);
                        } else {
                          for (const auto& s : a.sources)
                            if (is_description(s))
                              throw_usage("give either one PIPE.json or ONNX models to chain, not both ('" + s + "')");
                          if (a.sources.size() < 2)
                            throw_usage("a chain needs two models or more (or one PIPE.json description)");
                          spec = chain_pipeline(a.sources, a.bindings.load_options(), name_of(a.options.measure.device),
                                                a.host_busy_ms * 1e-3);
                        }
                        PipelineResult result = run_pipeline(spec, a.options);
                        result.notices.insert(result.notices.begin(), notices.begin(), notices.end());
                        ReportOptions ro;
                        write_output(a.output, [&](std::ostream& out, bool is_tty) {
                          ro.color = a.format == "table" && is_tty;
                          make_pipeline_writer(a.format)->write(result, ro, out);
                        });
                        ro.color = false;
                        for (const auto& [format, file] : a.extra_outputs)
                          if (!file.empty())
                            write_output(file, [&](std::ostream& out, bool) {
                              make_pipeline_writer(format)->write(result, ro, out);
                            });
                        return 0;
                      },
                      /*render: the Python module has no pipeline yet*/ {}});
}

}  // namespace modelstat::cli
