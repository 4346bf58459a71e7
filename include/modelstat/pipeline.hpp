// Pipelines (issue 15): several models and host work in one application path,
// each stage timed without stalling the path (seed 001). Plain data, no
// LibTorch: the description is read and checked by modelstat_measurements
// (analyzer/measurements/pipeline_spec.cc, which loads each model's graph to
// check the links), run by the profiler (profiler/pipeline.cc), formatted by
// tools/writers/pipeline_*.cc. Times are in seconds. docs/pipeline.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/profile.hpp"

namespace modelstat {

// Where a model stage's graph input comes from: an output of an earlier
// model stage (by index in PipelineSpec::stages and output index), or its own
// random input from the fixed seed when it is fed by no stage.
struct StageInputSource {
  std::string input;        // the graph input's name
  int from_stage = -1;      // -1: own random input
  int from_output = -1;     // index among that stage's graph outputs
  std::string output_name;  // that output's name (for reports)
};

enum class StageKind {
  Model,     // an ONNX model on `device`
  HostBusy,  // host work of a fixed duration: the host thread spins busy_seconds
  HostModel, // an ONNX model run on the CPU executor between device stages (pre-/post-processing)
};
const char* stage_kind_name(StageKind kind);  // "model", "host_busy", "host_model"

struct PipelineStage {
  std::string name;  // unique; default "<model file stem>" or "host<k>"
  StageKind kind = StageKind::Model;
  std::string model;          // path (Model, HostModel), resolved against the description's folder
  std::string device = "cpu"; // "cpu" / "cuda" (HostModel and HostBusy: "cpu")
  LoadOptions load;           // bindings: dims, input shapes (links add the linked inputs' shapes)
  double busy_seconds = 0;    // HostBusy
  std::vector<StageInputSource> inputs;  // Model / HostModel: one per graph input, in graph order
  std::vector<std::string> output_names; // Model / HostModel: graph outputs, in order
  std::vector<std::string> output_shapes; // Shape::to_string of each output (as bound)
  bool is_model() const { return kind != StageKind::HostBusy; }
  // Its time comes from the host clock (host work, or a CPU model in a path
  // whose other stages run on a GPU).
  bool on_host() const { return kind != StageKind::Model || device == "cpu"; }
};

struct PipelineSpec {
  std::string source;  // the description file, or "chain of N models"
  std::vector<PipelineStage> stages;
};

// Reads and checks a description (docs/pipeline.md). Every model named is
// loaded (graph and shapes only, never weights) to check the links: a bad
// description is Error(Input) naming the file and the stage: an unknown key, a
// link to a missing stage or output, a link to a stage that runs later or a
// cycle, shapes or dtypes that differ between an output and the input it feeds.
PipelineSpec read_pipeline_file(const std::string& path);
// The same from a parsed text (tests); `origin` names it in errors, `folder`
// resolves relative model paths.
PipelineSpec parse_pipeline_text(const std::string& text, const std::string& origin, const std::string& folder);
// `modelstat pipeline a.onnx b.onnx ...`: each model feeds the next
// positionally, with `bindings` applied to every model (a --dim wherever its
// symbol occurs, an --input where the model has that input) and, when
// host_busy_seconds > 0, a busy host stage between consecutive models.
PipelineSpec chain_pipeline(const std::vector<std::string>& models, const LoadOptions& bindings,
                            const std::string& device, double host_busy_seconds);

struct PipelineOptions {
  ProfileOptions measure;  // warm-up, stopping rule, threads, seed, input sets: as `profile`
  bool timer_comparison = false;  // --timer-comparison
  int in_flight = 0;              // --in-flight N (0: not measured)
  int stage_threads = 0;          // intra-op threads per stage worker with N > 1 (0: the default rule)
  bool layers = false;            // --layers: each model stage's per-layer profile, apart from the path
  int timeline_iterations = 4;    // iterations kept for the timeline (HTML, trace)
};

// One stage's time in one way of timing.
struct StageTiming {
  std::string stage;
  TimingSummary time;
  std::string clock;  // "host clock", "cuda events", "host clock, no sync (enqueue only)", ...
};

// One way of timing the whole path (the events pass, or a row of the
// timer comparison): per stage, and the path end to end in the same pass.
struct PathTiming {
  std::string method;       // "events", "host timer, no sync", "sync after every stage"
  std::string description;  // what it measures, one line
  std::vector<StageTiming> stages;
  TimingSummary stage_sum;    // per iteration, the sum of the stages
  TimingSummary end_to_end;   // per iteration, first stage's start to last stage's end
};

// One stage's interval in one iteration of the timeline, seconds from the
// timeline's origin (the first kept iteration's start).
struct TimelineSpan {
  int stage = 0;
  int64_t iteration = 0;  // frame number
  double start = 0, end = 0;
};

struct InFlightResult {
  int frames_in_flight = 0;
  std::string mechanism;        // "a worker thread per stage (CPU)" / "a CUDA stream per frame, ..."
  std::string threads;          // how intra-op threads were set, one line
  int intra_op_threads_per_stage = 0;
  double throughput = 0;        // frames per second over the measured window
  double measured_seconds = 0;  // the window
  int64_t frames = 0;           // measured frames
  TimingSummary latency;        // per frame: admitted to the path -> last stage done
  std::vector<StageTiming> stages;  // service time per stage (the stage's own work)
  int bottleneck_stage = -1;    // the stage with the largest median service time
  double bottleneck_bound = 0;  // 1 / that median: frames per second it allows at most
  std::vector<TimelineSpan> timeline;
};

struct StageLayers {
  std::string stage;
  TimingSummary whole, layer_sum;
  std::vector<LayerTiming> layers;
};

struct PipelineResult {
  std::string source;
  std::vector<PipelineStage> stages;
  RunContext context;
  // Pass 1: the clean path, no timer between stages (an interval timer
  // around the whole path: host clock on the CPU, events on a GPU).
  TimingSummary end_to_end;
  // Pass 2: events (GPU) / host clock (CPU) between stages, one wait per iteration.
  PathTiming staged;
  std::vector<TimelineSpan> timeline;   // a few iterations of pass 2
  std::vector<PathTiming> comparison;   // --timer-comparison: three rows
  std::string comparison_note;          // why they agree (CPU) or differ
  std::optional<InFlightResult> in_flight;
  std::vector<StageLayers> layers;      // --layers
  std::vector<std::string> notices;
};

// Runs and measures the path (profiler/pipeline.cc). Error(Usage) for bad
// options, Error(CannotRun) for what this machine cannot run.
PipelineResult run_pipeline(const PipelineSpec& spec, const PipelineOptions& options);

}  // namespace modelstat
