// The `fit` writers (tools/writers/fit_*_writer.cc) pinned by golden files
// (tests/data/golden/fit-*): hand-built forecasts, one for inference with a
// latency budget it misses and one for a training step with a memory budget
// and the batch search, so the writers are checked apart from the forecaster
// (whose figures tests/analyzer/fit checks). Regenerate with
// MODELSTAT_UPDATE_GOLDEN=1 ctest --test-dir build -R WritersGolden.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "modelstat/fit.hpp"
#include "test_support.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace {

// 20 GB/s, 100 GFLOP/s at n = 1024 and a quarter of it at n = 64, 5 µs per op.
DeviceCeilings fit_ceilings() {
  DeviceCeilings c = test::cpu_ceilings(2e10, 1e11);
  c.date = "2025-01-02T03:04:05Z";
  c.host = "node-7";
  c.op_overhead_seconds = 5e-6;
  c.matmul[0].best_size = 1024;
  c.matmul[0].curve = {{64, 2.5e10}, {1024, 1e11}};
  return c;
}

NodeForecast node(int index, std::string name, std::string op, bool contraction, double compute, double memory,
                  double overhead, ForecastBound bound) {
  NodeForecast n;
  n.index = index;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.contraction = contraction;
  n.equivalent_gemm_n = contraction ? 181.5 : 0;
  n.compute_flops_per_second = contraction ? 6.4e10 : 1e11;
  n.compute_seconds = compute;
  n.memory_seconds = memory;
  n.overhead_seconds = overhead;
  n.forward_seconds = std::max(compute, memory) + overhead;
  n.bound = bound;
  return n;
}

// Three nodes: a Conv priced on the matmul curve with CPU scratch, a Relu with
// a measured op class, a Reshape that only pays its call.
FitReport inference_report() {
  FitReport r;
  r.model_path = "models/tiny_cnn.onnx";
  r.batch = 8;
  r.ceilings = fit_ceilings();
  r.compute_dtype = "fp32";
  r.compute_peak_flops_per_second = 1e11;
  r.latency_budget_seconds = 1e-4;
  NodeForecast conv = node(0, "/stem/Conv", "Conv", true, 2.4e-4, 6.0e-5, 5e-6, ForecastBound::Compute);
  conv.scratch_seconds = 1.2e-5;
  conv.workspace_bytes = 245760;
  conv.forward_seconds += conv.scratch_seconds;
  NodeForecast relu = node(1, "/stem/Relu", "Relu", false, 1e-7, 3.2e-5, 5e-6, ForecastBound::Memory);
  relu.op_cost = "Relu";
  relu.kernel_seconds = 2.8e-5;
  relu.fresh_bytes = 4194304;
  relu.fresh_seconds = 2.1e-6;
  relu.forward_seconds += relu.fresh_seconds;
  NodeForecast reshape = node(2, "/head/Reshape", "Reshape", false, 0, 0, 5e-6, ForecastBound::Overhead);
  r.nodes = {conv, relu, reshape};
  r.memory.weights_bytes = 1792;
  r.memory.activation_peak_bytes = 8388608;
  r.memory.activation_sharing = "views share their input's buffer, elementwise ops run in place";
  r.memory.workspace_bytes = 245760;
  r.memory.total_bytes = 1792 + 8388608 + 245760;
  r.memory.peak_node = "/stem/Relu";
  r.memory.peak_phase = "forward";
  r.memory.largest_workspace_bytes = 245760;
  r.memory.largest_workspace_node = "/stem/Conv";
  double forward = 0;
  for (const NodeForecast& n : r.nodes) forward += n.forward_seconds;
  r.latency.forward_seconds = forward;
  r.latency.total_seconds = forward;
  r.meets_latency = false;
  r.batch_search.searched = true;
  r.batch_search.analyses = 5;
  r.batch_search.limit = 1024;
  r.batch_search.largest_meeting_latency = 2;
  r.notices = {"1 graph input had no batch size; used 8"};
  return r;
}

// The same model as a training step with Adam, within a 64 MiB budget; the
// batch search stops at its limit, so the answer is "that or more".
FitReport training_report() {
  FitReport r = inference_report();
  r.train = true;
  r.optimizer = Optimizer::Adam;
  r.latency_budget_seconds.reset();
  r.meets_latency.reset();
  r.memory_budget_bytes = int64_t(64) << 20;
  r.fits_memory = true;
  for (NodeForecast& n : r.nodes) n.backward_seconds = 2 * n.forward_seconds;
  r.nodes[0].backward_fresh_bytes = 1048576;
  r.memory.activation_sharing = "views share their input's buffer";
  r.memory.trainable_params = 448;
  r.memory.gradient_bytes = 1792;
  r.memory.gradient_bytes_at_peak = 1792;
  r.memory.optimizer_state_bytes = 3584;
  r.memory.saved_activation_bytes = 12582912;
  r.memory.total_bytes += 1792 + 3584 + 12582912;
  r.memory.peak_node = "/stem/Conv";
  r.memory.peak_phase = "backward";
  r.memory.lower_bound = true;
  r.latency.backward_seconds = 2 * r.latency.forward_seconds;
  r.latency.optimizer_seconds = 2.6e-5;
  r.latency.optimizer_fresh_bytes = 0;
  r.latency.total_seconds = r.latency.forward_seconds + r.latency.backward_seconds + r.latency.optimizer_seconds;
  r.batch_search = BatchSearch{};
  r.batch_search.searched = true;
  r.batch_search.analyses = 11;
  r.batch_search.limit = 1024;
  r.batch_search.largest_fitting_memory = 1024;
  r.batch_search.note = "stopped at the search limit";
  return r;
}

std::string render(const std::string& format, const FitReport& r) {
  std::ostringstream out;
  make_fit_writer(format)->write(r, out);
  return out.str();
}

TEST(WritersGolden, FitEveryFormat) {
  for (const auto& [name, report] :
       std::vector<std::pair<std::string, FitReport>>{{"inference", inference_report()}, {"train", training_report()}}) {
    for (const auto& [format, ext] : std::vector<std::pair<std::string, std::string>>{{"table", "txt"}, {"json", "json"}}) {
      SCOPED_TRACE(name + " " + format);
      test::expect_golden("fit-" + name + "." + ext, render(format, report), {"node-7"});
    }
  }
}

}  // namespace
}  // namespace modelstat
