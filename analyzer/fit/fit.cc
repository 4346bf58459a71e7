// The fit forecast: memory and latency of inference or one training step from
// the static analysis and the device ceilings, budgets and the batch search.
// This file assembles the forecast and searches the batch; the rules live
// beside it, each stated with its reason in docs/FIT.md:
//   op_classes.*             which nodes are contractions, which measured op class prices a node
//   libtorch_1_13_kernels.*  ATen 1.13's CPU kernel choice, scratch and call cost (one LibTorch version)
//   training_step.*          gradient flow (one requires-grad pass), trainable weights, the optimizer update
//   training_graph.*         the step's graph: precision's dtypes, autocast's casts, checkpointing's recomputation
//   sharding.*               ZeRO's model states per device, DeepSpeed's estimators
//   training_setup.cc        the precision and checkpointing names (include/modelstat/training_setup.hpp)
//   memory_forecast.*        the inference and training peaks over include/modelstat/lifetimes.hpp, fresh memory
//   latency.*                each node's forward and backward time and its bound, the optimizer's time
//   optimizer.cc             the optimizer names (include/modelstat/optimizer.hpp)
#include "modelstat/fit.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "analyzer/fusion/fusion_plan.hpp"
#include "analyzer/fit/latency.hpp"
#include "analyzer/fit/libtorch_1_13_kernels.hpp"
#include "analyzer/fit/memory_forecast.hpp"
#include "analyzer/fit/training_step.hpp"
#include "analyzer/run_invariant.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

// 1.1: nodes[].op_cost, nodes[].kernel_seconds; 1.2: fresh allocation bytes and seconds;
// 1.3: memory.activation_sharing; 1.4: memory.training (precision, checkpointing, ZeRO).
const char* const kFitJsonSchemaVersion = "1.5";  // 1.5: decoder (fit --context)

const char* bound_name(ForecastBound bound) {
  // In the enum's order.
  static const char* const kNames[] = {"compute", "memory", "kernel", "scratch", "overhead", "fresh"};
  return kNames[size_t(bound)];
}

FitReport forecast_fit(const AnalysisResult& analysis, const DeviceCeilings& ceilings, const FitOptions& options) {
  if (!analysis.model) throw Error(ErrorKind::Runtime, "forecast_fit needs the analysed model's IR");
  const Graph& g = analysis.model->graph;
  if (!(ceilings.memory_bandwidth > 0)) throw_usage("the ceilings have no memory bandwidth");
  const double peak = ceilings.peak_flops(options.compute_dtype);
  if (!(peak > 0))
    throw_usage("the ceilings have no matmul figure for " + options.compute_dtype + " (device " +
                ceilings.device_name + ")");

  if (!options.train && (options.precision != TrainPrecision::Fp32 || options.checkpointing != Checkpointing::None ||
                         options.zero_stage >= 0 || options.shards != 1))
    throw_usage("--precision, --checkpointing, --shards and --zero-stage describe a training step: add --train");
  if (options.zero_stage < -1 || options.zero_stage > 3) throw_usage("--zero-stage must be 0, 1, 2 or 3");
  if (options.shards < 1) throw_usage("--shards must be at least 1");
  if (options.shards > 1 && options.zero_stage < 0)
    throw_usage("--shards N divides model states across N data-parallel processes only under ZeRO: give "
                "--zero-stage 1|2|3 (0: ZeRO's layout, nothing divided); plain data parallelism holds everything on "
                "every process, which is --shards 1");
  FitReport r;
  r.model_path = analysis.model_path;
  r.train = options.train;
  r.optimizer = options.optimizer;
  r.memory_budget_bytes = options.memory_budget_bytes;
  r.latency_budget_seconds = options.latency_budget_seconds;
  r.ceilings = ceilings;
  r.compute_dtype = options.compute_dtype;
  r.compute_peak_flops_per_second = peak;
  if (!g.inputs.empty()) {
    const Shape& s = g.tensors[size_t(g.inputs[0])].shape;
    if (s.rank_known && !s.dims.empty() && s.dims[0].known()) r.batch = s.dims[0].value;
  }
  if (analysis.totals.nodes_unknown_op + analysis.totals.nodes_unknown_shape > 0)
    r.notices.push_back(std::to_string(analysis.totals.nodes_unknown_op + analysis.totals.nodes_unknown_shape) +
                        " node(s) have no exact cost: their time is only the per-op overhead");

  if (ceilings.measured() && ceilings.op_costs.empty())
    r.notices.push_back(
        "the ceilings have no op costs (saved by a modelstat before schema 1.2): every node is priced by the "
        "roofline alone; run 'modelstat device' again for the measured op classes (docs/FIT.md)");
  // Per-node workspace and latency.
  const bool cpu = ceilings.device_kind == "cpu";
  if (!cpu)
    r.notices.push_back("workspace is not forecast on " + ceilings.device_kind +
                        " (library algorithm choice); memory is weights + activations");
  // ATen's CPU kernel rules per node (workspace, scratch traffic, call cost).
  std::vector<fit::CpuKernel> kernels(g.nodes.size());
  std::vector<int64_t> workspace(g.nodes.size(), 0);
  if (cpu)
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      kernels[i] = fit::cpu_kernel(g, g.nodes[i], ceilings.threads);
      workspace[i] = kernels[i].workspace_bytes;
    }
  const fit::GradientFlow flow = fit::gradient_flow(g);
  const fit::TrainableWeights weights = fit::trainable_weights(g, flow);
  // Allocations the host maps afresh every time (DeviceCeilings::fresh_allocation_*).
  fit::Pricing pricing{g, ceilings, options, peak};
  pricing.fresh_threshold = ceilings.fresh_allocation_threshold_bytes;
  pricing.fresh_seconds_per_byte = pricing.fresh_threshold > 0 ? ceilings.fresh_allocation_seconds_per_byte : 0.0;
  pricing.inputs_from_memory =
      cpu && fit::graph_inputs_from_memory(analysis.totals.weight_bytes + analysis.totals.input_bytes, ceilings);
  pricing.weights_cold_share =
      cpu ? fit::weights_cold_share(analysis.totals.weight_bytes + analysis.totals.bytes_written, ceilings) : 1.0;
  std::vector<int64_t> fresh_bytes(g.nodes.size(), 0);
  if (pricing.fresh_seconds_per_byte > 0)
    fresh_bytes = fit::fresh_forward_bytes(g, options.train,
                                           options.train ? fit::training_workspace(g, workspace) : workspace,
                                           pricing.fresh_threshold);
  const size_t n_nodes = std::min(g.nodes.size(), analysis.nodes.size());
  // Inference on the CPU runs fused groups (analyzer/fusion/fusion_plan.hpp,
  // `profile --fusion on`): the same plan the executor runs. A member does
  // not run on its own, its work is in its head's kernel (the Conv and MatMul
  // op classes are measured on those kernels), so it is priced at nothing. A
  // training step runs every node as written.
  const bool fp32 = options.compute_dtype == "fp32";
  const FusionPlan fusion =
      cpu && !options.train
          ? plan_fusion(g, *analysis.model, inference_fusion_options(true, fp32, true, false, true))
          : FusionPlan{};
  if (fusion.absorbed_count > 0) {
    const int64_t matmul_groups = std::count_if(fusion.groups.begin(), fusion.groups.end(), [](const FusedGroup& m) {
      return m.kind == FusedKind::MatMul && !m.members.empty();
    });
    r.notices.push_back(std::to_string(fusion.absorbed_count) + " node(s) run inside " +
                        std::to_string(fusion.count("conv_group")) + " Conv groups and " +
                        std::to_string(matmul_groups) +
                        " Gemm/MatMul groups (BatchNormalization folded, bias Adds, activations, GELU and residual "
                        "Adds as post-ops, as profile runs them), " + std::to_string(fusion.count("gelu")) +
                        " GELU and " + std::to_string(fusion.count("layer_norm")) +
                        " LayerNorm groups written out, " + std::to_string(fusion.count("batch_norm_relu")) +
                        " BatchNormalization + Relu pairs in one pass, " + std::to_string(fusion.count("qdq")) +
                        " QDQ int8 kernels: priced at 0, their work in the head's (op_cost \"fused\")");
  }
  // The executor runs a run-invariant node (shape arithmetic, weights
  // rearranged by nodes: analyzer/run_invariant.hpp) once per set of input
  // shapes and keeps its outputs (profiler/plan.cc): an inference run does not
  // pay for it. A group head is not folded (its group's kernel runs).
  const RunInvariance invariance = options.train ? RunInvariance{} : run_invariance(g, false);
  int64_t folded = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    const FusedGroup* group = fusion.headed_by(int(i));
    // A Conv group runs on the executor's own oneDNN convolution
    // (profiler/ops/fp32_conv.hpp): weights prepacked at load, activations
    // channels-last, read as they are. ATen's per-call reorders of the input,
    // weight and output (the scratch pass of libtorch_1_13_kernels.cc) do not
    // happen: on resnet18 they priced the 3x3 groups 1.04-1.20x their
    // measured times. Workspace (memory) keeps ATen's rule.
    fit::CpuKernel kernel = kernels[i];
    if (group && group->kind == FusedKind::Conv) kernel.scratch_traffic_bytes = 0;
    NodeForecast f = fit::forecast_node(pricing, i, analysis.nodes[i], kernel, fresh_bytes[i], flow);
    if (i < fusion.group_of.size() && fusion.group_of[i] >= 0)
      f.fused_head = fusion.groups[size_t(fusion.group_of[i])].head;
    if (group && group->kind == FusedKind::Qdq) fit::price_int8_head(pricing, g.nodes[i], *group, f);
    if (group && group->kind == FusedKind::Conv) fit::price_conv_head(pricing, g.nodes[i], *group, f);
    if (group && group->kind == FusedKind::MatMul) fit::price_matmul_head(pricing, g.nodes[i], *group, f);
    if (group) fit::price_written_out(pricing, *group, f);
    if (cpu) fit::price_integer_contraction(pricing, g.nodes[i], f);
    // A node that does not run per inference: priced at 0, under `why`.
    auto priced_at_zero = [&f](const char* why, ForecastBound bound) {
      NodeForecast zero;
      zero.index = f.index;
      zero.name = f.name;
      zero.op_type = f.op_type;
      zero.fused_head = f.fused_head;
      zero.op_cost = why;
      zero.bound = bound;
      f = std::move(zero);
    };
    if (i < invariance.nodes.size() && invariance.nodes[i] && f.fused_head < 0) {
      priced_at_zero("run-invariant", ForecastBound::Overhead);
      ++folded;
    }
    if (i < fusion.absorbed.size() && fusion.absorbed[i]) priced_at_zero("fused", ForecastBound::Kernel);
    r.latency.forward_seconds += f.forward_seconds;
    r.latency.backward_seconds += f.backward_seconds;
    r.nodes.push_back(std::move(f));
  }
  if (folded > 0)
    r.notices.push_back(std::to_string(folded) +
                        " run-invariant node(s) (shape arithmetic, constants rearranged) run once per set of input "
                        "shapes, not per inference: priced at 0 (op_cost \"run-invariant\")");
  if (options.train) fit::forecast_optimizer(pricing, weights, r.latency);

  std::optional<fit::TrainingGraph> training;
  std::vector<int64_t> training_workspace_bytes;
  if (options.train) {
    training = fit::training_graph(g, options);
    training_workspace_bytes.assign(training->graph.nodes.size(), 0);
    if (cpu)
      for (size_t i = 0; i < training->graph.nodes.size(); ++i)
        training_workspace_bytes[i] =
            fit::cpu_kernel(training->graph, training->graph.nodes[i], ceilings.threads).workspace_bytes;
    if (options.checkpointing != Checkpointing::None && training->recomputed_regions == 0)
      r.notices.push_back(std::string("--checkpointing ") + name_of(options.checkpointing) + " found no " +
                          (options.checkpointing == Checkpointing::Selective
                               ? "attention core (a MatMul of two activations whose output reaches another through "
                                 "same-sized nodes)"
                               : "block (a node-name path component ending in an index, e.g. /layer.0/)") +
                          ": every activation is kept");
    if (options.precision != TrainPrecision::Fp32)
      r.notices.push_back("--precision changes the memory forecast only; latency is priced on the --dtype " +
                          options.compute_dtype + " matmul curve");
  }
  r.memory = fit::forecast_memory(analysis, options, weights, workspace, training ? &*training : nullptr,
                                  training_workspace_bytes);
  if (r.memory.lower_bound) r.notices.push_back("some activation sizes are unknown: memory is a lower bound");

  r.latency.total_seconds = r.latency.forward_seconds + r.latency.backward_seconds + r.latency.optimizer_seconds;
  if (options.memory_budget_bytes) r.fits_memory = r.memory.total_bytes <= *options.memory_budget_bytes;
  if (options.latency_budget_seconds) r.meets_latency = r.latency.total_seconds <= *options.latency_budget_seconds;
  return r;
}

// -------------------------------------------------------------- batch search

namespace {

// Largest b in [1, limit] with ok(b), assuming ok is monotone (true up to
// some batch, false after): doubling, then binary search between the last
// good and the first bad batch. 0 when ok(1) is false.
int64_t largest_batch(const std::function<bool(int64_t)>& ok, int64_t limit) {
  if (!ok(1)) return 0;
  int64_t good = 1, bad = 0;
  for (int64_t b = 2;; b *= 2) {
    b = std::min(b, limit);
    if (b == good) return good;  // the limit fits
    if (!ok(b)) {
      bad = b;
      break;
    }
    good = b;
  }
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    (ok(mid) ? good : bad) = mid;
  }
  return good;
}

}  // namespace

FitReport fit_model(const AnalyzeAtBatch& analyze_at_batch, int64_t batch, const DeviceCeilings& ceilings,
                    const FitOptions& options) {
  FitReport report = forecast_fit(analyze_at_batch(batch), ceilings, options);
  report.batch = batch;
  BatchSearch& s = report.batch_search;
  if (!options.memory_budget_bytes && !options.latency_budget_seconds) {
    s.note = "no budget given";
    return report;
  }
  // Forecasts per batch, each analysed once and shared by both searches.
  struct Point {
    int64_t memory = 0;
    double seconds = 0;
    bool valid = false;
  };
  std::map<int64_t, Point> points;
  auto at = [&](int64_t b) -> const Point& {
    auto it = points.find(b);
    if (it != points.end()) return it->second;
    Point p;
    try {
      const FitReport f = forecast_fit(analyze_at_batch(b), ceilings, options);
      p = {f.memory.total_bytes, f.latency.total_seconds, true};
    } catch (const Error& e) {
      // A size that overflows 64 bits fits nothing; anything else is real.
      if (e.kind() != ErrorKind::Input) throw;
    }
    return points.emplace(b, p).first->second;
  };
  // The batch must be free: a model that fixes its leading dim analyses the
  // same at every batch, and searching it would only return the limit.
  const Point& one = at(1);
  const Point& two = at(2);
  if (one.valid && two.valid && one.memory == two.memory && one.seconds == two.seconds) {
    s.note = "the model fixes its batch dim (the forecast is the same at batch 1 and 2): export it with a symbolic "
             "batch dim to search";
    s.analyses = int(points.size());
    return report;
  }
  s.searched = true;
  s.limit = options.max_batch_limit;
  // The largest batch whose forecast meets `within`.
  auto search = [&](const std::function<bool(const Point&)>& within) {
    return largest_batch([&](int64_t b) { return at(b).valid && within(at(b)); }, options.max_batch_limit);
  };
  if (options.memory_budget_bytes)
    s.largest_fitting_memory = search([&](const Point& p) { return p.memory <= *options.memory_budget_bytes; });
  if (options.latency_budget_seconds)
    s.largest_meeting_latency = search([&](const Point& p) { return p.seconds <= *options.latency_budget_seconds; });
  s.analyses = int(points.size());
  return report;
}

}  // namespace modelstat
