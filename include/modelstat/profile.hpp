// Runtime profiling results: plain data, no LibTorch types. Produced by
// profiler/protocol.cc, formatted by tools/writers/profile_*_writer.cc.
// Times are in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/run_config.hpp"

namespace modelstat {

// Percentiles: linear interpolation between closest ranks (Hyndman-Fan type 7,
// NumPy's default). Median CI: distribution-free, from binomial order statistics.
extern const char* const kPercentileMethod;

struct TimingSummary {
  int64_t count = 0;
  double mean = 0, median = 0, stddev = 0, cv = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double median_ci_low = 0, median_ci_high = 0;  // 95% interval of the median
  double rel_ci = 0;                             // half-width / median
  std::string stop_reason;                       // why sampling stopped
  std::vector<double> samples;                   // raw samples, in run order
};

struct ProfileOptions {
  DeviceKind device = DeviceKind::Cpu;
  // Compute dtype: Own (the model's own dtypes; a float16 node without a
  // kernel on the device runs in fp32), Fp32 (every float tensor in fp32),
  // Tf32 / Fp16 / Bf16 (CUDA).
  ComputeDtype dtype = ComputeDtype::Own;
  int threads = 0;             // CPU intra-op threads; 0 = all cores
  uint64_t seed = 0x5eed;
  int input_sets = 2;          // rotated between iterations
  // Warm-up: at least this many runs and this long.
  int64_t warmup_iterations = 5;
  double warmup_seconds = 0.5;
  // Measurement: min count and min time, then until the median's relative CI
  // half-width is under target, or max time / max count.
  int64_t min_iterations = 10;
  double min_seconds = 1.0;
  double max_seconds = 10.0;
  int64_t max_iterations = 1000000;
  double target_rel_ci = 0.01;
  bool per_layer = true;       // the instrumented second pass
  bool end_to_end = false;     // whole-model samples include H2D + D2H copies
  // Fusion (`--fusion on|off`; `--no-fuse` is off): QDQ patterns on int8
  // kernels (analyzer/fusion/patterns/qdq.cc) and, on the CPU in fp32, Conv groups
  // on oneDNN (analyzer/fusion/fusion_plan.hpp). Off runs every ONNX node as written.
  // Never in a training step (it runs node by node).
  bool fuse = true;
  // fp32 Gemm / MatMul with constant weights on the CPU (`--gemm`): "auto"
  // (oneDNN's matmul or BLAS, whichever measures faster for the shape, the
  // choice cached per machine; profiler/ops/fp32_matmul.hpp), "onednn" or
  // "blas". Never in a training step (it runs through ATen).
  GemmBackend gemm = GemmBackend::Auto;
  std::vector<int64_t> batch_sweep;  // batch sizes to measure (empty: none)
  bool find_max_batch = false;
  int64_t max_batch_limit = 4096;
  int concurrency = 0;         // independent requests in flight (0: not measured)
  bool measure_memory = false; // peak allocator bytes of one inference (MemoryMeasurement)
  bool train_step = false;     // measure forward + backward + optimizer step (TrainStepResult)
  Optimizer optimizer = Optimizer::Adam;  // for train_step
  // for train_step: Fp32, or Bf16 (CPU autocast, fp32 master weights; profiler/train_step.hpp)
  TrainPrecision train_precision = TrainPrecision::Fp32;
  // Values fed to graph inputs instead of random data (profiler/given_inputs.hpp):
  // --value NAME=V[,V...] as typed, and --inputs DIR (a test case's
  // input_N.pb TensorProtos, bound to the graph inputs by name or order).
  std::vector<std::string> input_values;
  std::string inputs_dir;
};

// A graph input the user gave values for (--value, --inputs).
struct GivenInput {
  std::string name, dtype;     // dtype_name()
  std::vector<int64_t> dims;
  std::string source;          // "--value" or the .pb file's path
  std::string values;          // the values as given ("16000"; "1,2,3"); a file's: empty
};

// What the control flow of a model did in the runs a profile observed (one
// per input set): the branch each If took and the trips of each Loop / Scan.
struct ControlFlowRun {
  std::string node, op_type;  // the node's name (a subgraph node's: its name, as --branch takes it)
  // Per input set, in order: "then" / "else" for an If (empty: not reached);
  // for a Loop / Scan, the body's runs per model run.
  std::vector<std::string> taken;
  std::vector<int64_t> trips;
  bool varied = false;        // the input sets disagree
  bool counted = false;       // the analysis counts what the first set ran (profile's recount)
};

struct RunContext {
  std::string device_name, device_kind;  // "cpu" / "cuda"
  std::string driver_version, runtime_version, torch_version;
  int threads = 0;
  std::string dtype;  // "fp32", "fp16", "bf16": --dtype, or the model's own (its float weights' dtype)
  int64_t batch = 0;
  std::string clocks;  // where readable
  std::string date, host;
  std::string timer;   // "steady_clock" / "cuda events on the execution stream"
  std::string allocator;  // the host C library allocator's configuration (configure_host_allocator)
  // CPU: the BLAS in the process and the core its kernels target (OpenBLAS's
  // openblas_get_corename / get_config; OPENBLAS_CORETYPE when set), and the
  // ISA oneDNN dispatches to (dnnl_get_effective_cpu_isa). Empty on CUDA.
  std::string blas, onednn_isa;
  // CPU: the OpenMP wait policy the intra-op threads run with (OMP_WAIT_POLICY,
  // and who chose it: modelstat's default PASSIVE, or the user).
  std::string openmp;
  // The inputs: random from this seed (ProfileOptions::seed; input set k
  // uses seed + k), except those the user gave (1.8).
  uint64_t seed = 0;
  std::vector<GivenInput> given_inputs;
};

struct ColdStart {
  double model_load = 0;       // read + parse + bind + infer shapes
  double weight_upload = 0;    // weights to tensors on the device
  double first_inference = 0;  // first run, including lazy init
  double steady_state_median = 0;
};

// A node's measured time: a top-level node of the per-layer pass
// (ProfileResult::layers), or a node inside an If / Loop / Scan subgraph, of
// the subgraph pass (ProfileResult::subgraph_layers).
struct LayerTiming {
  // A top-level node's index in graph order; a subgraph node's: the index of
  // the top-level node it runs inside (as AnalysisResult::subgraph_nodes).
  int index = 0;
  // A subgraph node's name is its path (subgraph_node_path, modelstat/graph.hpp):
  // "Loop_3/body/MatMul_1", the name of its row in the analysis.
  std::string name, op_type;
  // Per model run: a subgraph node's is the sum over its calls in that run,
  // over the runs in which it was called (time.count of them). Samples kept
  // only in JSON.
  TimingSummary time;
  // The node (or a node of its subgraphs) ran in fp32 for want of a kernel
  // for its fp16/bf16 inputs on the device: its time includes the casts.
  bool upcast_to_fp32 = false;
  // Subgraph nodes only (0, 1 and the median for a top-level node). depth: 1
  // in a subgraph of a top-level node, 2 one level further down, ...;
  // calls_per_run: the mean over the runs that called it (a Loop body's node:
  // the trip count); median_per_call: seconds, the median over those runs of
  // the run's time / its calls.
  int depth = 0;
  double calls_per_run = 1;
  double median_per_call = 0;
  // A DequantizeLinear the executor fused into the node that reads it (QDQ
  // fusion, analyzer/fusion/patterns/qdq.cc): that node's name. It did not run: its
  // time is only the per-layer markers', its work is in that node's time, so
  // no FLOP/s is derived from it. Also a member of a CPU Conv group
  // (analyzer/fusion/fusion_plan.hpp): the group's head.
  std::string fused_into;
  // The head of a CPU Conv group: the ONNX nodes its one kernel ran besides
  // itself (BatchNormalization folded, activations and a residual Add as
  // post-ops), in graph order. Its time is the group's; the join gives it the
  // cost of its members too (join_layer). Empty for every other row.
  std::vector<std::string> fused_members;
  // The kernel that ran a group's head ("brgconv:avx512_core", or "aten (...)"
  // where oneDNN offered only its reference implementation); else empty.
  std::string kernel;
};

// The top-level layers of one group under --group-by (modelstat/grouping.hpp,
// apply_grouping in modelstat/joined.hpp): their times and costs summed, the
// costs as join_layer gives them. Empty optionals are "not known", never 0.
// Memory peaks are not sums of layers: not here.
struct LayerGroup {
  std::string key;      // GroupRule::key of its layers
  int first_index = 0;  // index of its first layer; groups are in this order
  int64_t layers = 0;
  // Layers without an exact cost (or without an analysis row): macs, flops
  // and bytes hold the known counts only, a lower bound.
  int64_t layers_not_exact = 0;
  int64_t macs = 0, flops = 0, bytes = 0;
  double seconds = 0;                               // sum of its layers' medians (layers with samples)
  std::optional<double> share_of_time;              // seconds / layer_median_sum, 0..1
  std::optional<double> share_of_flops;             // flops / the analysis's total FLOPs (some layer exact)
  std::optional<double> achieved_flops_per_second;  // flops / seconds (some layer exact)
  std::optional<double> achieved_bytes_per_second;  // bytes / seconds (some layer exact)
};

struct BatchPoint {
  int64_t batch = 0;
  bool fits = true;
  std::string failure;  // "out of memory", ...
  double median = 0;    // seconds per batch
  double throughput = 0;  // samples per second = batch * iterations / elapsed
};

struct ConcurrencyResult {
  int requests_in_flight = 0;
  double throughput = 0;  // requests (batches) per second, all streams together
  TimingSummary latency;  // per request
  std::string mechanism;  // "CPU threads" / "CUDA streams"
};

// Memory measured, not estimated: the live bytes of LibTorch's allocator (CPU: a
// counting wrapper around the default allocator; CUDA: the caching allocator's
// statistics). `method` says which.
struct MemoryMeasurement {
  std::string method;
  int64_t weights_bytes = 0;         // live once the weights are on the device, before any run
  int64_t inference_peak_bytes = 0;  // peak live bytes during one inference, weights included
};

// One training step through LibTorch autograd on the executor's ATen ops:
// forward, a scalar loss, backward, optimizer update.
struct TrainStepResult {
  std::string optimizer;             // "sgd", "momentum", "adam"
  std::string precision = "fp32";    // "fp32", "bf16" (autocast; weights, gradients and state fp32)
  std::string loss;                  // how the scalar loss is formed from the outputs
  int64_t trainable_params = 0;      // float weight elements updated
  TimingSummary time;                // whole step
  double forward_seconds = 0, backward_seconds = 0, optimizer_seconds = 0;  // medians of the parts
  int64_t peak_bytes = 0;            // peak live allocator bytes during a step (after the first)
  std::string memory_method;
};

struct ProfileResult {
  AnalysisResult analysis;
  RunContext context;
  ColdStart cold;
  TimingSummary whole;          // clean whole-model pass (no instrumentation)
  TimingSummary layer_sum;      // per-iteration sum of the instrumented pass
  std::vector<LayerTiming> layers;
  // The subgraph pass (a model with If / Loop / Scan nodes, per-layer timing
  // on): a third pass with markers around the nodes inside subgraphs only, so
  // that `layers` keep times without them. One row per subgraph node that ran,
  // in the analysis's row order (each node, then the nodes of its own
  // subgraphs; grouped by `index`); an If's untaken branch has none.
  // subgraph_layer_sum: per-iteration sum of the depth-1 rows (the time spent
  // inside the subgraphs of top-level nodes); count: the pass's iterations.
  TimingSummary subgraph_layer_sum;
  std::vector<LayerTiming> subgraph_layers;
  // --group-by: the rule as given ("" when none) and the top-level layers
  // summed per group in order of first appearance (apply_grouping,
  // modelstat/joined.hpp; analysis.group_by / analysis.groups then hold the
  // same rule's cost sums). Subgraph layers are inside their parent's.
  std::string group_by;
  std::vector<LayerGroup> groups;
  TimingSummary h2d, d2h;       // input / output copies, timed apart
  int64_t h2d_bytes = 0, d2h_bytes = 0;
  bool end_to_end = false;
  std::vector<BatchPoint> batch_sweep;
  int64_t max_batch = 0;        // largest batch that ran (0: not searched)
  std::optional<ConcurrencyResult> concurrency;
  std::optional<MemoryMeasurement> memory;
  std::optional<TrainStepResult> train_step;
  // Whether the inference passes ran fused (ProfileOptions::fuse): "on" or
  // "off"; empty in a document older than profile schema 1.7.
  std::string fusion;
  // If / Loop / Scan nodes as the runs took them (1.8); empty without control flow.
  std::vector<ControlFlowRun> control_flow;
  std::vector<std::string> notices;
};

// Profiles a model file end to end (load, bind, weights, warm-up, both passes,
// copies, optional batch sweep / max batch / concurrency).
ProfileResult profile_model(const std::string& path, const LoadOptions& load, const ProfileOptions& options);

}  // namespace modelstat
